/**
 * One page's event stream (SPEC 22.1). A page that stops reading (a sleeping laptop,
 * a stuck tab, a client that never reads) must not make the server keep every state
 * it was sent: while the socket has not taken the last frame, newer states replace
 * one another in a single slot, and the newest is written once the socket drains.
 * Heartbeats are skipped meanwhile (the stream is evidently not idle).
 */
import type {ServerResponse} from 'node:http'
import type {Subscriber} from './hub.js'

export function sseSubscriber(res: ServerResponse): Subscriber {
  let backedUp = false
  let waiting: string | null = null
  const write = (json: string) => {
    const frame = json === '' ? ': heartbeat\n\n' : `event: state\ndata: ${json}\n\n`
    if (res.write(frame)) return
    backedUp = true
    res.once('drain', () => {
      backedUp = false
      const next = waiting
      waiting = null
      if (next !== null && !res.destroyed) write(next)
    })
  }
  return {
    // '' is the heartbeat: a comment line the page ignores
    send(json) {
      if (res.destroyed || res.writableEnded) return
      if (backedUp) {
        if (json !== '') waiting = json
        return
      }
      write(json)
    },
  }
}
