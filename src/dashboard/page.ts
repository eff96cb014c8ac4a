/**
 * The page `helix dashboard` serves: static HTML, one stylesheet and one script,
 * all from this server (CSP `default-src 'self'`, no inline script or style). The
 * script builds every row with DOM calls and puts every untrusted string in with
 * `textContent`; no data ever goes through innerHTML. No build step: the script is
 * plain browser JavaScript kept here as text.
 */
import {OUTCOME_COLORS} from '../report/html.js'

export const CSP = "default-src 'self'; img-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>helix dashboard</title>
<link rel="stylesheet" href="/app.css">
<script src="/app.js" defer></script>
</head>
<body>
<header><h1>helix dashboard</h1><span id="conn" class="muted">connecting…</span></header>
<main id="projects"></main>
</body>
</html>
`

const outcomeCss = Object.entries(OUTCOME_COLORS)
  .map(([o, c]) => `.o-${o.toLowerCase().replace(/[^a-z0-9]+/g, '-')}{background:${c}}`)
  .join('\n')

export const PAGE_CSS = `
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:20px;color:#222;background:#fff}
header{display:flex;gap:16px;align-items:baseline} h1{font-size:20px;margin:0} h2{font-size:18px;margin:18px 0 6px} h3{font-size:15px;margin:16px 0 6px}
.muted{color:#666} .empty{color:#888;font-style:italic} .error{color:#b00020}
.project{border-top:2px solid #ddd;margin-top:12px;padding-top:4px}
.figures{display:flex;gap:14px;flex-wrap:wrap;margin:8px 0}
.figures div{background:#f4f4f4;padding:6px 10px;border-radius:6px} .figures b{display:block;font-size:17px}
.bar{height:10px;background:#eee;border-radius:5px;overflow:hidden;max-width:600px} .bar i{display:block;height:100%;background:#2e9e44}
table{border-collapse:collapse;width:100%;max-width:1200px} th,td{text-align:left;padding:3px 8px;border-bottom:1px solid #e4e4e4;vertical-align:top}
th{background:#fafafa;font-weight:600} code,.mono{font:12px ui-monospace,monospace}
.slots{display:grid;grid-template-columns:repeat(auto-fill,minmax(320px,1fr));gap:10px;max-width:1200px}
.slot{border:1px solid #cde;border-radius:6px;padding:8px;background:#f7fbff}
.slot .last-output{font:12px ui-monospace,monospace;white-space:pre-wrap;word-break:break-all;background:#fff;border:1px solid #eee;padding:4px;margin-top:4px}
.state{display:inline-block;padding:0 6px;border-radius:8px;font-size:12px;color:#fff;background:#777}
.state-running{background:#1f6feb} .state-landed{background:#2e9e44} .state-failed,.state-timeout,.state-stalled{background:#d9453b}
.state-not_landed{background:#e06fa8} .state-not_completed{background:#e8a33d} .state-blocked{background:#8a2be2}
.ev-completed{color:#2e7d32} .ev-failed,.ev-not_landed{color:#b00020} .ev-blocked{color:#8a2be2} .ev-paused{color:#a06000}
img.chart{max-width:100%;height:auto;display:block}
.legend{display:flex;gap:10px;flex-wrap:wrap;font-size:12px} .legend i{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:4px;vertical-align:middle}
${outcomeCss}
`

/** The styles of the report's SVG charts, inside each chart image. */
export const SVG_CSS = `text{font:11px ui-monospace,monospace;fill:#555} .grid{stroke:#eee} .axis{stroke:#999} .cum-line{fill:none;stroke:#2e9e44;stroke-width:2} .cum-point{fill:#2e9e44}`

// Plain browser JavaScript (no template literals inside: this file keeps it as one).
export const PAGE_JS = String.raw`'use strict'
;(function () {
  var root = document.getElementById('projects')
  var conn = document.getElementById('conn')
  var state = null
  var ticker = null
  var OUTCOMES = ${JSON.stringify(Object.keys(OUTCOME_COLORS))}

  function el(tag, attrs, kids) {
    var e = document.createElement(tag)
    if (attrs) for (var k in attrs) {
      if (k === 'text') e.textContent = attrs[k] == null ? '' : String(attrs[k])
      else if (k === 'cls') e.className = attrs[k]
      else e.setAttribute(k, String(attrs[k]))
    }
    if (kids) kids.forEach(function (c) { if (c) e.appendChild(c) })
    return e
  }
  function span(s) {
    if (s == null) return '?'
    s = Math.max(0, Math.round(s))
    if (s < 90) return s + 's'
    if (s < 5400) return Math.floor(s / 60) + 'm ' + (s % 60) + 's'
    // minutes rounded first: 71h 59m 40s is 72h 0m, not 71h 60m
    var m = Math.round(s / 60)
    return Math.floor(m / 60) + 'h ' + (m % 60) + 'm'
  }
  function clock(iso) {
    var d = new Date(iso)
    if (isNaN(d.getTime())) return ''
    var p = function (n) { return (n < 10 ? '0' : '') + n }
    return p(d.getHours()) + ':' + p(d.getMinutes()) + ':' + p(d.getSeconds())
  }
  // '00:25:18 (in 59m 40s)' on the operator's clock; the text as it is when it is no time
  function until(iso) {
    var t = Date.parse(iso)
    if (isNaN(t)) return iso
    return clock(iso) + (t > Date.now() ? ' (in ' + span((t - Date.now()) / 1000) + ')' : '')
  }
  function logLink(p, l) {
    if (!l) return null
    var href = '/log/' + p + '/' + encodeURIComponent(l.file) + '?from=' + l.from + '&to=' + l.to + (l.slot != null ? '&slot=' + l.slot : '')
    var a = el('a', {text: 'L' + l.from + '–L' + l.to + (l.slot != null ? ' (w' + l.slot + ')' : ''), target: '_blank', rel: 'noopener', cls: 'log-link mono'})
    a.href = href
    return a
  }
  function table(head, rows, cls) {
    if (rows.length === 0) return el('p', {cls: 'empty', text: 'none'})
    return el('table', {cls: cls || ''}, [
      el('thead', null, [el('tr', null, head.map(function (h) { return el('th', {text: h}) }))]),
      el('tbody', null, rows),
    ])
  }
  function td(x) {
    if (x && x.nodeType) return el('td', null, [x])
    return el('td', {text: x})
  }
  function figure(value, label, id) {
    var b = el('b', {text: value})
    if (id) b.id = id
    return el('div', null, [b, document.createTextNode(label)])
  }

  function slotsOf(p) {
    if (p.slots.length === 0) return el('p', {cls: 'empty', text: p.run && p.run.live ? 'no slot busy right now' : 'no run going'})
    return el('div', {cls: 'slots'}, p.slots.map(function (s) {
      var elapsed = el('span', {cls: 'elapsed'})
      if (s.started_at) elapsed.setAttribute('data-since', s.started_at)
      elapsed.textContent = s.started_at ? span((Date.now() - Date.parse(s.started_at)) / 1000) : '?'
      return el('div', {cls: 'slot', 'data-slot': s.slot, 'data-bead': s.bead}, [
        el('div', null, [el('b', {text: 'w' + s.slot + ' '}), el('code', {cls: 'bead-id', text: s.bead}), document.createTextNode(' '), el('span', {cls: 'title', text: s.title})]),
        el('div', {cls: 'muted'}, [
          document.createTextNode((s.agent || 'agent') + (s.attempt ? ', attempt ' + s.attempt : '') + ', '),
          elapsed,
          document.createTextNode(s.timeout_s ? ' of ' + span(s.timeout_s) : ''),
          document.createTextNode(' '),
          logLink(p.index, s.log),
        ]),
        el('div', {cls: 'last-output', text: s.last_output || '…'}),
      ])
    }))
  }

  function runOf(p) {
    var r = p.run
    if (!r) return el('p', {cls: 'empty', text: 'no run recorded yet'})
    var head = r.live ? 'running (pid ' + r.pid + ', ' + (r.phase || '?') + ')' : 'last run ended: ' + (r.stopped || r.stop_reason || 'no stop recorded (killed?)')
    var kids = [el('p', {cls: 'run-line', text: head + ' — ' + r.completed + ' completed of ' + r.attempted + ' attempted' + (r.max_cycles ? ' (max ' + r.max_cycles + ')' : '') + ', ' + r.tokens.toLocaleString('en-US') + ' tokens' + (r.cost_usd ? ', $' + r.cost_usd.toFixed(2) : '') + (r.mean_cycle_s != null ? ', mean cycle ' + span(r.mean_cycle_s) : '')})]
    if (r.paused_until) kids.push(el('p', {cls: 'ev-paused', text: 'paused until ' + until(r.paused_until) + (r.pause_reason ? ': ' + r.pause_reason : '')}))
    var rows = p.run_beads.map(function (b) {
      var links = el('span')
      b.logs.forEach(function (l) { links.appendChild(logLink(p.index, l)); links.appendChild(document.createTextNode(' ')) })
      return el('tr', {'data-bead': b.bead, 'data-state': b.state, cls: 'run-bead'}, [
        td(el('code', {text: b.bead})), td(b.title), td(el('span', {cls: 'state state-' + b.state, text: b.state})), td(String(b.attempts)), td(b.reason || ''), td(links),
      ])
    })
    kids.push(table(['bead', 'title', 'state', 'attempts', 'reason', 'log'], rows, 'run-beads'))
    return el('div', null, kids)
  }

  // 'Ready (2,345; the first 100 shown)' when the list was cut
  function heading(name, shown, all, which) {
    return name + ' (' + all.toLocaleString('en-US') + (all > shown ? '; the ' + (which || 'first') + ' ' + shown + ' shown' : '') + ')'
  }
  function queueOf(p) {
    var q = p.queue
    if (!q) return el('p', {cls: 'empty', text: p.error ? 'the queue shows again once the project reads (see above)' : 'no tracker'})
    var c = q.counts
    // the lists carry the first 100 of each; these are their full lengths
    var n = q.lengths || {ready: q.ready.length, waiting: q.waiting.length, blocked: q.blocked.length, closed_today: q.closed_today.length, held: (q.held || []).length}
    var pct = c.total ? Math.round((100 * c.closed) / c.total) : 0
    var bar = el('div', {cls: 'bar'}, [el('i')])
    bar.firstChild.style.width = pct + '%'
    return el('div', null, [
      el('div', {cls: 'figures'}, [
        figure(c.closed + '/' + c.total, 'closed', 'closed-' + p.index),
        figure(String(c.ready), 'ready'),
        figure(String(c.waiting), 'waiting'),
        figure(String(c.blocked), 'blocked'),
        figure(String(n.closed_today), 'closed today'),
        figure(q.eta_s != null ? span(q.eta_s) : '—', 'ETA'),
      ]),
      bar,
      el('h3', {text: heading('Blocked', q.blocked.length, n.blocked)}),
      table(['bead', 'title', 'reason'], q.blocked.map(function (b) { return el('tr', {'data-bead': b.id, cls: 'blocked-bead'}, [td(el('code', {text: b.id})), td(b.title), td(b.reason)]) })),
      q.held && q.held.length ? el('h3', {text: heading('Held back by this run', q.held.length, n.held)}) : null,
      q.held && q.held.length ? table(['bead', 'title', 'why', 'tried again'], q.held.map(function (b) { return el('tr', {'data-bead': b.id, cls: 'held-bead'}, [td(el('code', {text: b.id})), td(b.title), td(b.reason), td(b.until ? until(b.until) : 'next run')]) })) : null,
      el('h3', {text: heading('Ready', q.ready.length, n.ready)}),
      table(['bead', 'title'], q.ready.map(function (b) { return el('tr', null, [td(el('code', {text: b.id})), td(b.title)]) })),
      el('h3', {text: heading('Waiting', q.waiting.length, n.waiting)}),
      table(['bead', 'title', 'waits on'], q.waiting.map(function (b) { return el('tr', null, [td(el('code', {text: b.id})), td(b.title), td(b.on.join(', '))]) })),
      el('h3', {text: heading('Closed today', q.closed_today.length, n.closed_today, 'newest')}),
      table(['bead', 'title'], q.closed_today.map(function (b) { return el('tr', null, [td(el('code', {text: b.id})), td(b.title)]) })),
    ])
  }

  // completed (salvaged, decomposed), failed / stalled / timeout / not completed, not landed, blocked, paused — then the reason
  function what(e) {
    if (e.kind === 'paused') return 'paused until ' + (e.until ? until(e.until) : '?') + (e.text ? ': ' + e.text : '')
    var label = e.kind === 'failed' && e.outcome ? e.outcome.toLowerCase().replace('_', ' ') : e.kind === 'completed' && e.outcome && e.outcome !== 'COMPLETE' ? 'completed (' + e.outcome.toLowerCase() + ')' : e.kind.replace('_', ' ')
    // a reason that already opens with the outcome ("stalled (no output for 20s)") is not prefixed twice
    if (e.text && e.text.toLowerCase().indexOf(label) === 0) return e.text
    return label + (e.text ? ' — ' + e.text : '')
  }
  function eventsOf(p) {
    return table(['at', 'what', 'bead', 'title', 'log'], p.events.map(function (e) {
      return el('tr', {cls: 'event ev-' + e.kind}, [td(clock(e.at)), td(what(e)), td(e.bead ? el('code', {text: e.bead}) : ''), td(e.title), td(logLink(p.index, e.log) || '')])
    }), 'events')
  }

  function fleetOf(p) {
    var f = p.fleet
    if (!f) return null
    var kids = [el('h3', {text: 'Fleet (' + f.remote + ')'})]
    if (f.error) kids.push(el('p', {cls: 'error', text: 'last read failed: ' + f.error}))
    if (!f.view) kids.push(el('p', {cls: 'empty', text: f.error ? 'no fleet read yet' : 'reading the remote…'}))
    else {
      var v = f.view
      kids.push(el('p', {cls: 'muted', text: v.remote + '/' + v.base + ' at ' + v.tip.slice(0, 12) + ': ' + v.counts.total + ' beads, ' + v.counts.open + ' open, ' + v.counts.claimed + ' claimed, ' + v.counts.closed + ' closed' + (f.read_at ? ' (read ' + clock(f.read_at) + ')' : '')}))
      kids.push(table(['bead', 'title', 'host', 'age', 'expires'], v.claims.map(function (c) {
        var exp = c.state === 'live' ? 'in ' + span(c.expires_in_s) : 'expired ' + span(-c.expires_in_s) + ' ago' + (c.state === 'takeable' ? ' (free to take over)' : '')
        return el('tr', {cls: 'claim', 'data-bead': c.bead}, [td(el('code', {text: c.bead})), td(c.title), td(c.host == null ? '(unreadable claim)' : c.host), td(c.age_s == null ? '' : span(c.age_s)), td(exp)])
      }), 'fleet'))
      kids.push(el('p', {cls: 'muted', text: v.hosts.length ? 'hosts active in the last ' + span(v.lease_s) + ': ' + v.hosts.join(', ') : 'no host active in the last ' + span(v.lease_s)}))
    }
    kids.push(el('h3', {text: 'Pull requests awaiting merge (' + f.pull_requests.length + ')'}))
    kids.push(table(['bead', 'pull request', 'age', 'checks', 'mergeable'], f.pull_requests.map(function (r) {
      return el('tr', null, [td(el('code', {text: r.bead})), td(r.url), td(r.age_s == null ? '' : span(r.age_s)), td(r.checks || '?'), td(r.mergeable == null ? '?' : r.mergeable ? 'yes' : 'no')])
    })))
    return el('section', {cls: 'fleet-pane'}, kids)
  }

  function chartsOf(p) {
    var legend = el('div', {cls: 'legend'}, OUTCOMES.map(function (o) { return el('span', null, [el('i', {cls: 'o-' + o.toLowerCase().replace(/[^a-z0-9]+/g, '-')}), document.createTextNode(o)]) }))
    var img = function (kind, alt) {
      var i = el('img', {cls: 'chart', alt: alt})
      i.src = '/chart/' + p.index + '/' + kind + '.svg?v=' + p.chart_version
      return i
    }
    return el('div', null, [el('h3', {text: 'Timeline of cycles per slot'}), legend, img('timeline', 'timeline of cycles per slot'), el('h3', {text: 'Beads closed over time'}), img('cumulative', 'beads closed over time')])
  }

  function render() {
    var keep = window.scrollY
    root.textContent = ''
    state.projects.forEach(function (p) {
      var n = p.night
      root.appendChild(el('section', {cls: 'project', 'data-project': p.index}, [
        el('h2', {text: p.name}),
        el('p', {cls: 'muted mono', text: p.root}),
        p.error ? el('p', {cls: 'error', text: p.error}) : null,
        el('p', {cls: 'muted', text: 'last 24 h: ' + n.runs + ' runs, ' + n.cycles + ' cycles, ' + n.closed + ' closed, ' + n.failed + ' failed, ' + n.tokens.toLocaleString('en-US') + ' tokens'}),
        el('h3', {text: 'Running'}),
        slotsOf(p),
        el('h3', {text: 'This run'}),
        runOf(p),
        queueOf(p),
        fleetOf(p),
        el('h3', {text: 'Last events'}),
        eventsOf(p),
        chartsOf(p),
      ]))
    })
    window.scrollTo(0, keep)
    var busy = state.projects.some(function (p) { return p.slots.length > 0 })
    // elapsed times tick only while a slot is busy: an idle page runs no timer
    if (busy && !ticker) ticker = setInterval(tick, 1000)
    if (!busy && ticker) { clearInterval(ticker); ticker = null }
  }
  function tick() {
    var spans = document.querySelectorAll('.elapsed[data-since]')
    for (var i = 0; i < spans.length; i++) spans[i].textContent = span((Date.now() - Date.parse(spans[i].getAttribute('data-since'))) / 1000)
  }

  // text the operator is selecting (to copy a bead id or an output line) would be wiped by
  // a render, several times a second while an agent prints: the page holds still meanwhile
  var held = false
  function selecting() {
    var sel = window.getSelection()
    return !!sel && !sel.isCollapsed && root.contains(sel.anchorNode)
  }
  document.addEventListener('selectionchange', function () {
    if (held && !selecting()) {
      held = false
      conn.textContent = 'live · updated ' + clock(state.generated_at)
      render()
    }
  })

  var es = new EventSource('/events')
  es.addEventListener('state', function (ev) {
    state = JSON.parse(ev.data)
    document.body.setAttribute('data-version', String(state.version))
    if (selecting()) {
      held = true
      conn.textContent = 'live · held while text is selected'
      return
    }
    conn.textContent = 'live · updated ' + clock(state.generated_at)
    render()
  })
  es.onerror = function () { conn.textContent = 'reconnecting…' }
})()
`
