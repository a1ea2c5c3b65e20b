/**
 * The report page's style sheet, inlined into every report.
 * @module
 */

/** The report's CSS: a light theme that follows the system's dark mode. */
export const PAGE_STYLES = `
:root{--bg:#fbfbfc;--fg:#1d2330;--muted:#69707d;--line:#e3e6eb;--panel:#fff;--lane:#f4f6f9;
--ok:#2f9e5b;--fail:#d64545;--cancel:#8a909a;--warn:#d98c1f;--run:#3b7dd8;--turn:#16423c;--crit:#7b3fe4}
@media (prefers-color-scheme:dark){:root{--bg:#15181e;--fg:#e4e7ec;--muted:#98a0ad;--line:#2c313a;--panel:#1c2028;--lane:#1a1e25;--turn:#c8f0e0}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
header{padding:20px 24px 8px}
h1{font-size:22px;margin:0 0 2px}h2{font-size:17px;margin:24px 0 8px}h3{font-size:15px;margin:16px 0 6px}h4{font-size:13px;margin:12px 0 4px}h5{font-size:12px;margin:8px 0 2px;color:var(--muted)}
.muted{color:var(--muted)}.hint{color:var(--muted);margin:2px 0 8px;font-size:13px}.run-id{margin:0 0 12px;font-size:12px}
.cards{display:flex;flex-wrap:wrap;gap:10px}
.card{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:8px 12px;min-width:120px}
.card-label{font-size:11px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted)}.card-value{font-size:15px;font-weight:600}
.layout{display:grid;grid-template-columns:minmax(0,1fr) 380px;gap:20px;padding:0 24px 32px;align-items:start}
@media (max-width:1100px){.layout{grid-template-columns:1fr}}
aside{position:sticky;top:12px;background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:4px 14px 14px;max-height:calc(100vh - 24px);overflow:auto}
aside h2{margin-top:12px}
section{margin-bottom:8px}
svg text{fill:var(--fg);font-size:11px}
.timeline{background:var(--panel);border:1px solid var(--line);border-radius:8px}
.lane-bg{fill:transparent}.lane-bg.odd{fill:var(--lane)}
.lane-label{font-size:11.5px}.lane-group{font-weight:700;font-size:11px;fill:var(--muted);text-transform:uppercase;letter-spacing:.05em}
.tick{stroke:var(--line);stroke-width:1}.tick-label{fill:var(--muted);font-size:10px;text-anchor:middle}
.bar{cursor:pointer;stroke:rgba(0,0,0,.15);stroke-width:.5}.bar:focus{outline:none;stroke:var(--fg);stroke-width:1.5}
.bar.selected,.dag-node.selected .node-box{stroke:var(--fg);stroke-width:2}
.bar.open{stroke-dasharray:3 2;stroke:var(--fg);opacity:.8}
.bar-turn{fill:var(--turn);opacity:.75;stroke:none}.bar-turn.inside{pointer-events:none}.bar-turn.st-failed{fill:var(--fail);opacity:1}
.bar-wait{fill:url(#hatch);stroke:var(--warn);stroke-width:.6}.hatch-line{fill:var(--warn)}
.st-completed,.st-succeeded{fill:var(--ok);--c:var(--ok)}
.st-failed{fill:var(--fail);--c:var(--fail)}
.st-cancelled,.st-aborted,.st-skipped{fill:var(--cancel);--c:var(--cancel)}
.st-paused,.st-budget-exhausted,.st-retrying,.rs-max-iterations,.rs-stalled,.rs-max-rounds{fill:var(--warn);--c:var(--warn)}
.st-running,.st-queued,.st-pending,.st-waiting-for-dependencies{fill:var(--run);--c:var(--run)}
.st-turn{fill:var(--turn);--c:var(--turn)}
.marker{stroke:var(--panel);stroke-width:.8}.marker-retry{fill:var(--warn)}.marker-stall{fill:var(--crit)}.marker-cancel{fill:var(--cancel)}.marker-warning{fill:#b8860b}.marker-failure{fill:var(--fail)}
.legend{display:flex;flex-wrap:wrap;gap:12px;margin:0 0 8px;font-size:12px;color:var(--muted)}
.legend-item{display:inline-flex;align-items:center;gap:5px}
.swatch{display:inline-block;width:14px;height:10px;border-radius:2px;background:var(--c)}
.dag-scroll{overflow-x:auto;background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:6px}
.dag-node{cursor:pointer}.dag-node .node-box{fill:var(--panel);stroke:var(--c);stroke-width:2}
.dag-node.critical .node-box{stroke-width:3.5}.dag-node:focus{outline:none}.dag-node:focus .node-box{stroke:var(--fg)}
.dag-node text{fill:var(--fg)}.node-title{font-weight:600;font-size:12px}.node-meta{fill:var(--muted)!important;font-size:11px}
.edge{fill:none;stroke:var(--muted);stroke-width:1.4}.edge.critical{stroke:var(--crit);stroke-width:3}.arrow{fill:var(--muted)}
table.usage{border-collapse:collapse;width:100%;background:var(--panel);border:1px solid var(--line);border-radius:8px;font-size:13px}
.usage th,.usage td{padding:6px 10px;border-bottom:1px solid var(--line);text-align:left}.usage th{font-size:11px;text-transform:uppercase;color:var(--muted);letter-spacing:.04em}
.usage .num{text-align:right;font-variant-numeric:tabular-nums}.usage tfoot td{font-weight:600;border-bottom:none}
.share-cell{width:22%}.share-track{display:block;height:8px;background:var(--lane);border-radius:4px;overflow:hidden}.share{display:block;height:100%;background:var(--run)}
.charts{display:flex;flex-wrap:wrap;gap:16px}
.score-chart{margin:0;background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:8px}
.score-chart figcaption{font-size:12px;color:var(--muted)}
.grid{stroke:var(--line)}.axis-label{fill:var(--muted)!important;font-size:10px}.axis-label.end{text-anchor:end}.axis-label.middle{text-anchor:middle}
.score-line{fill:none;stroke:var(--run);stroke-width:2}.point{fill:var(--panel);stroke:var(--run);stroke-width:2}.point.met{fill:var(--ok);stroke:var(--ok)}
.stall{fill:var(--crit)!important;font-size:13px;text-anchor:middle}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;color:#fff;background:var(--c,var(--muted));margin-right:6px}
.badge.critical{background:var(--crit)}
.field{display:flex;gap:8px;font-size:13px;margin:2px 0}.field-label{color:var(--muted);min-width:74px}
pre{white-space:pre-wrap;word-break:break-word;background:var(--lane);border:1px solid var(--line);border-radius:6px;padding:8px;margin:2px 0 6px;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;max-height:320px;overflow:auto}
pre.error,.block.error pre,.run-error{border-color:var(--fail);background:color-mix(in srgb,var(--fail) 10%,var(--panel))}
.run-error{margin:10px 0 0}
details{border:1px solid var(--line);border-radius:6px;padding:4px 8px;margin:4px 0}details.error{border-color:var(--fail)}
summary{cursor:pointer;font-size:12.5px}
button.link{background:none;border:none;padding:0;color:var(--run);cursor:pointer;font:inherit;text-decoration:underline}
ul.children,ol.attempts{margin:4px 0;padding-left:20px;font-size:13px}ol.attempts li{margin:3px 0}
`;
