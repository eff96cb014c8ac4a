/** Minimal PNG reader for test screenshots (8-bit RGB/RGBA, non-interlaced): pixels, no dependencies. */
import {readFileSync} from 'node:fs'
import {inflateSync} from 'node:zlib'

export interface Image {
  width: number
  height: number
  /** RGBA, 4 bytes a pixel */
  data: Uint8Array
}

export function readPng(file: string): Image {
  const buf = readFileSync(file)
  if (buf.readUInt32BE(0) !== 0x89504e47) throw new Error(`${file} is not a PNG`)
  let off = 8
  let width = 0
  let height = 0
  let colorType = 0
  const idat: Buffer[] = []
  while (off < buf.length) {
    const len = buf.readUInt32BE(off)
    const type = buf.toString('latin1', off + 4, off + 8)
    const body = buf.subarray(off + 8, off + 8 + len)
    if (type === 'IHDR') {
      width = body.readUInt32BE(0)
      height = body.readUInt32BE(4)
      if (body[8] !== 8 || body[12] !== 0) throw new Error('only 8-bit non-interlaced PNGs')
      colorType = body[9]
    } else if (type === 'IDAT') idat.push(body)
    else if (type === 'IEND') break
    off += 12 + len
  }
  const bpp = colorType === 6 ? 4 : colorType === 2 ? 3 : 0
  if (!bpp) throw new Error(`unsupported PNG color type ${colorType}`)
  const raw = inflateSync(Buffer.concat(idat))
  const stride = width * bpp
  const out = new Uint8Array(width * height * 4)
  const prev = new Uint8Array(stride)
  const cur = new Uint8Array(stride)
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1))
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? cur[i - bpp] : 0
      const b = prev[i]
      const c = i >= bpp ? prev[i - bpp] : 0
      let v = line[i]
      if (filter === 1) v += a
      else if (filter === 2) v += b
      else if (filter === 3) v += (a + b) >> 1
      else if (filter === 4) {
        const p = a + b - c
        const pa = Math.abs(p - a)
        const pb = Math.abs(p - b)
        const pc = Math.abs(p - c)
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c
      }
      cur[i] = v & 0xff
    }
    for (let x = 0; x < width; x++) {
      out[(y * width + x) * 4] = cur[x * bpp]
      out[(y * width + x) * 4 + 1] = cur[x * bpp + 1]
      out[(y * width + x) * 4 + 2] = cur[x * bpp + 2]
      out[(y * width + x) * 4 + 3] = bpp === 4 ? cur[x * bpp + 3] : 255
    }
    prev.set(cur)
  }
  return {width, height, data: out}
}

/**
 * Solid rectangles of one exact colour: connected regions (4-neighbour) whose
 * bounding box is `minH..maxH` pixels tall and at least `minW` wide.
 */
export function colorBoxes(img: Image, hex: string, opts: {minH: number; maxH: number; minW: number}): Array<{x: number; y: number; w: number; h: number}> {
  const r = parseInt(hex.slice(1, 3), 16)
  const g = parseInt(hex.slice(3, 5), 16)
  const b = parseInt(hex.slice(5, 7), 16)
  const {width, height, data} = img
  const match = (i: number) => data[i * 4] === r && data[i * 4 + 1] === g && data[i * 4 + 2] === b
  const seen = new Uint8Array(width * height)
  const boxes: Array<{x: number; y: number; w: number; h: number}> = []
  const stack: number[] = []
  for (let start = 0; start < width * height; start++) {
    if (seen[start] || !match(start)) continue
    let x0 = width
    let y0 = height
    let x1 = -1
    let y1 = -1
    stack.push(start)
    seen[start] = 1
    while (stack.length) {
      const i = stack.pop()!
      const x = i % width
      const y = (i - x) / width
      if (x < x0) x0 = x
      if (x > x1) x1 = x
      if (y < y0) y0 = y
      if (y > y1) y1 = y
      for (const j of [x > 0 ? i - 1 : -1, x < width - 1 ? i + 1 : -1, y > 0 ? i - width : -1, y < height - 1 ? i + width : -1]) {
        if (j >= 0 && !seen[j] && match(j)) {
          seen[j] = 1
          stack.push(j)
        }
      }
    }
    const w = x1 - x0 + 1
    const h = y1 - y0 + 1
    if (h >= opts.minH && h <= opts.maxH && w >= opts.minW) boxes.push({x: x0, y: y0, w, h})
  }
  return boxes
}
