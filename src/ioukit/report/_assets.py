"""The stylesheet and script inlined into every HTML report (no framework, no network).

The script reads the JSON the report embeds (``#report-data``) and only counts and draws:
statuses at the chosen IoU threshold and confidence come from the evaluation's own match
(per-prediction TP / ignored bits, matched ground truth). All text from the data goes through
``textContent`` or attribute setters, never ``innerHTML``. Colours: the Okabe-Ito palette
(colour-blind safe), with a dash pattern per outcome as well.
"""

from __future__ import annotations

__all__ = ["COMPARE_JS", "CSS", "JS"]

CSS = r"""
:root{--tp:#009E73;--fp:#D55E00;--fn:#0072B2;--ig:#8c8c8c;--ink:#1b1b1b;--mute:#5a5a5a;
--line:#d6d6d6;--bg:#fff;--hi:#f4f4f4;font-family:system-ui,-apple-system,"Segoe UI",sans-serif}
body{margin:0;color:var(--ink);background:var(--bg);line-height:1.4}
header{position:sticky;top:0;z-index:5;background:#fafafa;border-bottom:1px solid var(--line);
padding:.4rem 1rem;display:flex;flex-wrap:wrap;gap:.4rem 1.2rem;align-items:center}
header h1{font-size:1.1rem;margin:0}
nav a{margin-right:.7rem;color:var(--fn)}
main{padding:0 1rem 4rem}
section{margin:1.2rem 0;border-top:1px solid var(--line)}
#confusion .scroll{content-visibility:auto;contain-intrinsic-size:auto 34rem}
.item svg{content-visibility:auto;contain-intrinsic-size:auto 170px}
h2{font-size:1.05rem;margin:.8rem 0 .4rem}
h3{font-size:.95rem;margin:.6rem 0 .2rem}
.provenance,.note{color:var(--mute);font-size:.85rem}
table{border-collapse:collapse;font-size:.85rem}
th,td{padding:.15rem .45rem;border-bottom:1px solid var(--line);text-align:right}
th:first-child,td:first-child{text-align:left}
.stats td{font-variant-numeric:tabular-nums}
.scroll{overflow:auto;max-height:34rem;border:1px solid var(--line)}
thead th{position:sticky;top:0;background:#fafafa}
th button{font:inherit;background:none;border:0;padding:0;cursor:pointer;color:inherit}
th[aria-sort=ascending] button::after{content:" \25B2"}
th[aria-sort=descending] button::after{content:" \25BC"}
tr.nogt td{color:var(--mute)}
.badge{display:inline-block;font-size:.7rem;border:1px solid var(--mute);border-radius:.6rem;
padding:0 .35rem;margin-left:.35rem;color:var(--mute)}
.controls{display:flex;flex-wrap:wrap;gap:.4rem 1rem;align-items:center;margin:.3rem 0;
font-size:.85rem}
.charts{display:flex;flex-wrap:wrap;gap:1rem}
figure{margin:0}
figcaption{font-size:.8rem;color:var(--mute);max-width:30rem}
svg text{font-size:11px;fill:var(--ink)}
.cm td,.cm th{text-align:center;min-width:1.6rem;padding:.1rem .2rem;font-size:.72rem}
.cm th.col{writing-mode:vertical-rl;transform:rotate(180deg);text-align:left;max-height:9rem;
white-space:nowrap;overflow:hidden}
.cm td[data-count]{cursor:pointer}
.cm td[data-count]:focus,.item:focus,.cm td.sel{outline:3px solid var(--ink);outline-offset:-2px}
.cm .bg{font-style:italic}
.legend span{margin-right:.8rem;white-space:nowrap}
.sw{display:inline-block;width:1.4rem;height:0;border-top:3px solid;vertical-align:middle;
margin-right:.25rem}
.gallery{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:.6rem;
margin-top:.5rem}
.item{border:1px solid var(--line);padding:.25rem;background:var(--hi);cursor:pointer}
.item svg{width:100%;height:170px;display:block;background:#e9e9e9}
.item figcaption{font-size:.75rem;overflow-wrap:anywhere}
rect.box{fill:none;vector-effect:non-scaling-stroke;stroke-width:2}
rect.box.faint{opacity:.3}
rect.box.focus{stroke-width:4}
.TP{stroke:var(--tp)}.FP{stroke:var(--fp);stroke-dasharray:6 3}
.FN{stroke:var(--fn);stroke-dasharray:2 2}.IG{stroke:var(--ig);stroke-dasharray:1 3}
.NA{stroke:#444}
.ph{fill:#f0f0f0}
dialog{max-width:min(92vw,1100px);width:92vw;border:1px solid var(--mute)}
dialog svg{width:100%;max-height:70vh;background:#e9e9e9}
.bar{fill:var(--fn)}
.muted{color:var(--mute)}
@media (prefers-reduced-motion:no-preference){html{scroll-behavior:smooth}}
"""

_HELPERS = r"""
  const NS = "http://www.w3.org/2000/svg";
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) {
      if (k === "text") e.textContent = attrs[k];
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), attrs[k]);
      else e.setAttribute(k, attrs[k]);
    }
    for (const c of kids) e.append(c);
    return e;
  }
  function sv(tag, attrs) {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    return e;
  }
  // column buttons that sort a table's rows ({tr, ...}: empty values last, the name column
  // ascending first, numbers descending first) and mark the sorted column with aria-sort
  function sortable(hr, tbody, rows, cols, value) {
    let key = null, dir = 1;
    cols.forEach(([name, label]) => {
      const th = el("th", {scope: "col", "data-col": name, "aria-sort": "none"});
      th.append(el("button", {text: label, onclick: () => {
        dir = key === name ? -dir : (name === "name" ? 1 : -1); key = name;
        hr.querySelectorAll("th").forEach((h) => h.setAttribute("aria-sort", "none"));
        th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
        rows.sort((a, c) => {
          const x = value(a, name), y = value(c, name);
          if (x === null && y === null) return 0;
          if (x === null) return 1;
          if (y === null) return -1;
          return (typeof x === "string" ? x.localeCompare(y) : x - y) * dir;
        });
        rows.forEach((o) => tbody.append(o.tr));
      }}));
      hr.append(th);
    });
  }
  function fmt(v, d) { return v === null || v === undefined ? "\u2014" : v.toFixed(d ?? 3); }
  function body(id) { return document.querySelector("#" + id + " .body"); }
  function chart(w, h, xlabel, ylabel) {
    const svg = sv("svg", {viewBox: "0 0 " + w + " " + h, width: w, height: h, role: "img"});
    const L = 42, B = 30, R = 10, Tp = 10, pw = w - L - R, ph = h - B - Tp;
    for (let i = 0; i <= 5; i++) {
      const v = i / 5, x = L + v * pw, y = Tp + (1 - v) * ph;
      svg.append(sv("line", {x1: L, x2: L + pw, y1: y, y2: y, stroke: "#e3e3e3"}));
      svg.append(sv("line", {x1: x, x2: x, y1: Tp, y2: Tp + ph, stroke: "#e3e3e3"}));
      const tx = sv("text", {x: x, y: h - B + 14, "text-anchor": "middle"});
      tx.textContent = v.toFixed(1); svg.append(tx);
      const ty = sv("text", {x: L - 4, y: y + 4, "text-anchor": "end"});
      ty.textContent = v.toFixed(1); svg.append(ty);
    }
    const xl = sv("text", {x: L + pw / 2, y: h - 2, "text-anchor": "middle"});
    xl.textContent = xlabel; svg.append(xl);
    const yl = sv("text", {x: 10, y: Tp + ph / 2, transform: "rotate(-90 10 " + (Tp + ph / 2) +
      ")", "text-anchor": "middle"});
    yl.textContent = ylabel; svg.append(yl);
    svg.line = (xs, ys, attrs) => {
      let d = "";
      for (let i = 0; i < xs.length; i++) {
        d += (i ? "L" : "M") + (L + xs[i] * pw).toFixed(1) + " " + (Tp + (1 - ys[i]) * ph)
          .toFixed(1);
      }
      svg.append(sv("path", Object.assign({d: d, fill: "none"}, attrs)));
    };
    svg.vline = (x, attrs) => svg.append(sv("line", Object.assign({x1: L + x * pw,
      x2: L + x * pw, y1: Tp, y2: Tp + ph}, attrs)));
    svg.box = (x0, x1, y0, y1, attrs) => svg.append(sv("rect", Object.assign({x: L + x0 * pw,
      y: Tp + (1 - y1) * ph, width: Math.max(0, (x1 - x0) * pw),
      height: Math.max(0, (y1 - y0) * ph)}, attrs)));
    return svg;
  }
  // a curves section's IoU-threshold and class selects ("allText": the class option -1) and
  // the box its charts go in: draw(t, k, wrap) fills it now and after every change
  function curveControls(b, thresholds, names, label, allText, draw) {
    const tsel = el("select", {id: "curve-iou", "aria-label": label});
    thresholds.forEach((t, i) => tsel.append(el("option", {value: i, text: t.toFixed(2)})));
    const csel = el("select", {id: "curve-class", "aria-label": "class"});
    csel.append(el("option", {value: -1, text: allText}));
    names.forEach((n, k) => csel.append(el("option", {value: k, text: n})));
    b.append(el("div", {class: "controls"}, el("label", {}, "PR at IoU ", tsel),
      el("label", {}, " class ", csel)));
    const wrap = el("div", {class: "charts"});
    b.append(wrap);
    const redraw = () => {
      wrap.textContent = "";
      draw(+tsel.value, +csel.value, wrap);
    };
    tsel.addEventListener("change", redraw);
    csel.addEventListener("change", redraw);
    redraw();
  }
"""


def _page(main: str) -> str:
    """A page's script: strict mode, one function scope, the shared helpers, then ``main``."""
    return '"use strict";\n(function () {\n' + _HELPERS + main + "})();\n"


JS = _page(r"""
  performance.mark("ioukit:start");
  const D = JSON.parse(document.getElementById("report-data").textContent);
  // the long columns arrive packed (base64 of little-endian integers, times a scale)
  const TYPED = {i1: Int8Array, u1: Uint8Array, i2: Int16Array, u2: Uint16Array,
    i4: Int32Array};
  function unpack(c) {
    const s = atob(c.b64), bytes = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
    const ints = new TYPED[c.t](bytes.buffer);
    if (c.scale === 1) return ints;
    const out = new Float64Array(ints.length);
    for (let i = 0; i < ints.length; i++) out[i] = ints[i] / c.scale;
    return out;
  }
  for (const [part, key] of D.packed || []) D[part][key] = unpack(D[part][key]);
  performance.mark("ioukit:parsed");
  const K = D.class_names.length, BG = K;
  const P = D.pred, G = D.gt, NP = P.img.length, NG = G.img.length;
  const NI = D.images.stem.length, HAS = D.summary.has_match;
  const T = D.thresholds;
  const AG = D.confusion && D.confusion.p ? D.confusion : null;
  const LE = D.label_errors && D.label_errors.p ? D.label_errors : null;
  const S = {t: 0, conf: 0, norm: "none", cls: -1, outcome: "any", q: "", sel: null,
    cm: AG ? "agnostic" : "own"};
  const predStat = new Uint8Array(NP), gtStat = new Uint8Array(NG);
  const NAMES = ["FP", "TP", "IG", "NE", "NA", "HIDE"];
  const WORDS = {TP: "true positive", FP: "false positive", FN: "missed (false negative)",
    IG: "ignored", NE: "not evaluated", NA: "prediction"};


  // objects per image (counting sort)
  function index(img) {
    const start = new Int32Array(NI + 1), order = new Int32Array(img.length);
    for (const i of img) start[i + 1]++;
    for (let i = 0; i < NI; i++) start[i + 1] += start[i];
    const pos = start.slice(0, NI);
    for (let j = 0; j < img.length; j++) order[pos[img[j]]++] = j;
    return {start, order};
  }
  const byImgP = index(P.img), byImgG = index(G.img);
  // the sparse match columns, unpacked: evaluated, ignored bits, matched gt, bits, IoU
  const EV = new Uint8Array(NP).fill(1), IGB = new Int32Array(NP);
  const GM = new Int32Array(NP).fill(-1), MB = new Int32Array(NP), IOU = new Float64Array(NP);
  if (HAS) {
    for (const r of P.ne) EV[r] = 0;
    P.ig.rows.forEach((r, j) => { IGB[r] = P.ig.bits[j]; });
    P.m.rows.forEach((r, j) => { GM[r] = P.m.g[j]; MB[r] = P.m.bits[j]; IOU[r] = P.m.iou[j]; });
  }

  // the class-agnostic match of the confusion matrix: -2 not taking part, -1 background
  const AGP = new Int32Array(NP).fill(-2), AGG = new Uint8Array(NG).fill(1);
  if (AG) {
    AG.p.forEach((r, j) => { AGP[r] = AG.g[j]; });
    for (const g of AG.gx) AGG[g] = 0;
    for (let p = 0; p < NP; p++) if (AGP[p] >= 0) AGG[AGP[p]] = 2;
  }
  const KINDS = {wrong_label: "possible wrong label", missing_annotation:
    "possible missing annotation", loose_box: "possible loose box"};

  function matchedGt(p, t) {
    if (!HAS) return -1;
    const x = P.gx[p];
    if (x) return x[t];
    return (MB[p] >> t) & 1 ? GM[p] : -1;
  }
  function iouAt(p, t) {
    const x = P.ix[p];
    if (x) return x[t];
    return matchedGt(p, t) >= 0 ? IOU[p] : null;
  }
  function recompute() {
    const t = S.t, c = S.conf;
    for (let g = 0; g < NG; g++) gtStat[g] = G.flag[g] ? 2 : 0;
    for (let p = 0; p < NP; p++) {
      let s;
      if (P.score[p] < c) s = 5;
      else if (!HAS) s = 4;
      else if (!EV[p]) s = 3;
      else if ((P.tp[p] >> t) & 1) s = 1;
      else if ((IGB[p] >> t) & 1) s = 2;
      else s = 0;
      predStat[p] = s;
      if (s === 1) { const g = matchedGt(p, t); if (g >= 0) gtStat[g] = 1; }
    }
  }
  function gtName(g) { return HAS ? ["FN", "TP", "IG"][gtStat[g]] : "NA"; }
  function predName(p) { return NAMES[predStat[p]]; }
  function clsName(k) { return k >= 0 ? D.class_names[k] : "(unknown class)"; }

  // ---------------------------------------------------------------- global controls
  function controls() {
    const box = document.getElementById("controls");
    if (T.length) {
      const sel = el("select", {id: "iou-threshold", "aria-label": "IoU threshold",
        onchange: () => { S.t = +sel.value; update(); }});
      T.forEach((t, i) => sel.append(el("option", {value: i, text: t.toFixed(2)})));
      box.append(el("label", {}, "IoU \u2265 ", sel));
    }
    const conf = el("input", {id: "confidence", type: "number", min: 0, max: 1, step: 0.05,
      value: 0, "aria-label": "minimum confidence", onchange: () => {
        const v = Math.min(1, Math.max(0, +conf.value || 0)); S.conf = v; update(); }});
    box.append(el("label", {}, " confidence \u2265 ", conf));
  }

  // ---------------------------------------------------------------- summary extras
  function summary() {
    const im = D.images;
    const m = document.getElementById("missing-images");
    if (im.given) {
      m.hidden = false;
      m.dataset.missing = im.missing;
      const ex = im.missing_examples.length ? " (e.g. " + im.missing_examples.join(", ") + ")" : "";
      m.textContent = im.missing + " of " + NI + " images missing or unreadable in " +
        im.folder + ex + "; images " + im.mode + ".";
    }
  }

  // ---------------------------------------------------------------- trust
  function table(id, caption, heads, rows) {
    const t = el("table", {id: id}, el("caption", {text: caption}));
    t.append(el("thead", {}, el("tr", {}, ...heads.map((h) => el("th", {scope: "col",
      text: h})))));
    const tb = el("tbody");
    rows.forEach((r) => tb.append(r));
    t.append(tb);
    return t;
  }
  function trust() {
    const R = D.trust, b = body("trust");
    b.append(el("h3", {text: "Notes"}));
    const ul = el("ul", {id: "trust-notes"});
    R.notes.forEach((n) => ul.append(el("li", {"data-code": n.code, "data-severity": n.severity},
      el("span", {class: "badge", text: n.severity}), " " + n.message,
      n.fix ? el("span", {class: "muted", text: " \u2014 " + n.fix}) : "")));
    b.append(ul);
    const I = R.intervals;
    b.append(el("h3", {text: "Intervals"}));
    b.append(el("p", {class: "note", id: "intervals-note", text: !I ? "No bootstrap " +
      "intervals (write_html(..., bootstrap=N) or --html-bootstrap N)." : I.note ? I.note :
      Math.round(100 * I.ci) + "% " + I.method + " bootstrap intervals over " + I.n +
      " replicates by image (seed " + I.seed + "; ioukit.bootstrap, re-accumulated from the " +
      "evaluation's match): beside each stat in the summary and each class's AP in Classes."}));
    const SL = R.slices;
    if (SL) {
      b.append(el("h3", {text: "Slices"}));
      const rows = [el("tr", {"data-slice": ""}, el("th", {scope: "row", text: "(all)"}),
        ...SL.whole.map((v) => el("td", {text: fmt(v)})))];
      SL.rows.forEach((r) => rows.push(el("tr", {"data-slice": r.name}, el("th", {scope: "row",
        text: r.name}), ...r.values.map((v, j) => el("td", {"data-stat": SL.stats[j],
        text: fmt(v) + (r.deltas[j] === null ? "" : " (" + (r.deltas[j] >= 0 ? "+" : "") +
        fmt(r.deltas[j]) + ")")})))));
      b.append(el("div", {class: "scroll"}, table("slices-table", "each slice re-accumulated " +
        "from the evaluation's match (result.slices), its delta to the whole in brackets",
        ["slice", ...SL.stats], rows)));
    }
    b.append(el("h3", {text: "Label-error candidates"}));
    if (!LE) {
      b.append(el("p", {class: "note", text: D.label_errors && D.label_errors.note ?
        D.label_errors.note : "No label-error candidates listed."}));
      return;
    }
    const cnt = Object.entries(LE.counts).map(([k, v]) => v + " " + KINDS[k]).join(", ");
    b.append(el("p", {class: "note", text: "The " + LE.p.length + " best-scored candidates " +
      "(result.label_errors; found: " + cnt + "): a high-score false positive on an " +
      "unmatched object of another class, far from any object, or a loose match on a large " +
      "object. Click one to see its objects."}));
    const rows = LE.p.map((p, r) => el("tr", {"data-candidate": r}, el("td", {text: String(r +
      1)}), el("td", {text: KINDS[LE.kind[r]]}), el("td", {}, el("button", {text:
      D.images.stem[P.img[p]], onclick: () => showCandidate(r)})), el("td", {text:
      clsName(P.cls[p])}), el("td", {text: LE.g[r] >= 0 ? clsName(G.cls[LE.g[r]]) : "\u2014"}),
      el("td", {text: fmt(LE.score[r])}), el("td", {text: fmt(LE.iou[r])})));
    b.append(el("div", {class: "scroll"}, table("label-errors-table", "ranked by score",
      ["#", "kind", "image", "predicted", "ground truth", "score", "IoU"], rows)));
  }
  function showCandidate(r) {
    S.outcome = "LE"; S.sel = null; S.cls = -1; S.q = "";
    document.getElementById("gallery-outcome").value = "LE";
    document.getElementById("gallery-class").value = -1;
    document.getElementById("gallery-image").value = "";
    drawConfusion(); gallery(); detail("l", r);
  }

  // ---------------------------------------------------------------- calibration
  function calibration() {
    const C = D.calibration, b = body("calibration");
    if (!C) {
      b.append(el("p", {class: "note", text: "No calibration: the evaluation keeps no match " +
        "at IoU 0.50 (or calibration_bins=0)."}));
      return;
    }
    const errs = el("p", {id: "calibration-errors", "data-ece": C.ece === null ? "" : C.ece,
      "data-mce": C.mce === null ? "" : C.mce, text: "ECE " + fmt(C.ece, 4) + " \u00b7 MCE " +
      fmt(C.mce, 4) + " \u00b7 ACE " + fmt(C.ace, 4) + " \u00b7 D-ECE " + fmt(C.d_ece, 4) +
      " over " + C.num_detections + " detections (" + C.num_true_positives + " true " +
      "positives) at IoU " + C.iou_threshold.toFixed(2)});
    b.append(errs);
    const f = chart(420, 300, "confidence", "precision (share of true positives)");
    f.line([0, 1], [0, 1], {stroke: "#8c8c8c", "stroke-dasharray": "4 3"});
    const n = C.count.length;
    for (let i = 0; i < n; i++) {
      if (!C.count[i]) continue;
      f.box(C.edges[i], C.edges[i + 1], 0, C.accuracy[i], {fill: "#0072B2", "fill-opacity":
        0.55, stroke: "#fff"});
      const mid = (C.edges[i] + C.edges[i + 1]) / 2;
      f.line([mid, mid], [C.accuracy_low[i], C.accuracy_high[i]], {stroke: "#1b1b1b"});
      f.line([C.confidence[i], C.confidence[i]], [0, C.confidence[i]], {stroke: "#D55E00",
        "stroke-width": 2});
    }
    const txt = "Reliability diagram at IoU " + C.iou_threshold.toFixed(2) + ": per " +
      C.strategy + " confidence bin (" + n + " bins) the share of the detections kept by the " +
      "evaluation's match that are true positives (blue bars, black: " +
      Math.round(100 * C.ci) + "% Wilson interval) against the bin's mean confidence " +
      "(orange); the dashed diagonal is perfect calibration. ECE " + fmt(C.ece, 4) +
      ", MCE " + fmt(C.mce, 4) + " (result.calibration, netcal's definitions). The table " +
      "below holds the same numbers.";
    f.setAttribute("aria-label", txt);
    b.append(el("figure", {id: "reliability-figure"}, f, el("figcaption", {text: txt})));
    const rows = [];
    for (let i = 0; i < n; i++) {
      rows.push(el("tr", {"data-bin": i}, el("td", {text: "[" + C.edges[i].toFixed(2) + ", " +
        C.edges[i + 1].toFixed(2) + ")"}), el("td", {text: String(C.count[i])}),
        el("td", {text: fmt(C.confidence[i])}), el("td", {text: fmt(C.accuracy[i])}),
        el("td", {text: C.count[i] ? "[" + fmt(C.accuracy_low[i]) + ", " +
          fmt(C.accuracy_high[i]) + "]" : "\u2014"})));
    }
    b.append(el("details", {}, el("summary", {text: "the bins as a table"}),
      table("calibration-table", "reliability bins", ["confidence bin", "detections",
        "mean confidence", "precision", Math.round(100 * C.ci) + "% interval"], rows)));
  }

  // ---------------------------------------------------------------- classes table
  function classes() {
    const C = D.classes, b = body("classes");
    const cols = [["name", "Class", (r) => r.name], ["gt", "GT", (r) => r.gt],
      ["pred", "Pred", (r) => r.pred]];
    C.metrics.forEach((m, j) => cols.push([m, m, (r) => r.m[j]]));
    const CI = D.trust.intervals && D.trust.intervals.classes;
    if (CI) {
      // sorted by the lower end; shown as [lower, upper]
      cols.push(["ci", "AP " + Math.round(100 * D.trust.intervals.ci) + "% interval",
        (r, k) => CI[k] ? CI[k][0] : null,
        (r, k) => CI[k] ? "[" + fmt(CI[k][0]) + ", " + fmt(CI[k][1]) + "]" : "\u2014"]);
    }
    ["conf", "P", "R", "F1"].forEach((m, j) => cols.push([m, m, (r) => r.op[j]]));
    b.append(el("p", {class: "note", text: C.operating + ". \u2014 : no data; rows marked " +
      "\u201cno GT\u201d have no ground truth."}));
    const q = el("input", {type: "search", id: "class-filter", placeholder: "filter classes",
      "aria-label": "filter classes by name"});
    const hide = el("input", {type: "checkbox", id: "hide-nogt"});
    b.append(el("div", {class: "controls"}, q, el("label", {}, hide, " hide classes without GT")));
    const thead = el("thead"), tbody = el("tbody"), hr = el("tr");
    const rows = C.rows.map((r, k) => {
      const tr = el("tr", {"data-class": k});
      if (!r.has_gt) tr.className = "nogt";
      cols.forEach(([name, , get, show], j) => {
        const v = get(r, k);
        let td;
        if (show) {
          td = el("td", {text: show(r, k)});
          if (CI && CI[k]) { td.dataset.lower = CI[k][0]; td.dataset.upper = CI[k][1]; }
        } else if (j === 0) {
          td = el("td", {}, el("button", {class: "linkish", text: r.name,
            title: "show this class in the gallery", onclick: () => showClass(k)}));
          if (!r.has_gt) td.append(el("span", {class: "badge", text: "no GT"}));
        } else {
          td = el("td", {text: typeof v === "number" && !Number.isInteger(v) ? fmt(v) :
            v === null ? "\u2014" : String(v)});
        }
        td.dataset.col = name;
        tr.append(td);
      });
      return {tr, r, k};
    });
    const getters = Object.fromEntries(cols.map(([name, , get]) => [name, get]));
    sortable(hr, tbody, rows, cols, (o, name) => getters[name](o.r, o.k));
    thead.append(hr);
    rows.forEach((o) => tbody.append(o.tr));
    const filter = () => {
      const s = q.value.toLowerCase();
      rows.forEach((o) => { o.tr.hidden = (s && !o.r.name.toLowerCase().includes(s)) ||
        (hide.checked && !o.r.has_gt); });
    };
    q.addEventListener("input", filter);
    hide.addEventListener("change", filter);
    b.append(el("div", {class: "scroll"}, el("table", {id: "class-table"},
      el("caption", {text: K + " classes"}), thead, tbody)));
  }

  // ---------------------------------------------------------------- curves
  function curves() {
    const C = D.curves, b = body("curves");
    if (!C || !C.thresholds) {
      b.append(el("p", {class: "note", text: "No curves: " + ((C && C.note) || "n/a")}));
      return;
    }
    const label = "IoU threshold of the PR curve";
    curveControls(b, C.thresholds, D.class_names, label, "all classes", (t, k, wrap) => {
      const pr = C.pr[t];
      const f1 = chart(420, 300, "recall", "precision");
      pr.forEach((c) => { if (c) f1.line(C.recall, c, {stroke: "#cfcfcf", "stroke-width": 1}); });
      if (C.mean[t]) f1.line(C.recall, C.mean[t], {stroke: "#000", "stroke-width": 2.5});
      if (k >= 0 && pr[k]) f1.line(C.recall, pr[k], {stroke: "#0072B2", "stroke-width": 2.5});
      const meanAp = C.mean[t] ? C.mean[t].reduce((a, v) => a + v, 0) / C.mean[t].length : null;
      const txt1 = "Precision against recall at IoU " + C.thresholds[t].toFixed(2) +
        ": grey one line per class, black the mean over classes with ground truth (area " +
        "under it: " + fmt(meanAp) + ")" + (k >= 0 ? ", blue " + D.class_names[k] +
        (pr[k] ? "" : " (no ground truth)") : "") + ". Precision is the interpolated " +
        "envelope sampled at 101 recall points, as pycocotools.";
      f1.setAttribute("aria-label", txt1);
      wrap.append(el("figure", {id: "pr-figure"}, f1, el("figcaption", {text: txt1})));
      const f2 = chart(420, 300, "confidence", "F1");
      C.f1.forEach((c) => { if (c) f2.line(C.confidence, c, {stroke: "#cfcfcf"}); });
      f2.line(C.confidence, C.mean_f1, {stroke: "#000", "stroke-width": 2.5});
      if (k >= 0 && C.f1[k]) f2.line(C.confidence, C.f1[k], {stroke: "#0072B2",
        "stroke-width": 2.5});
      f2.vline(C.best_confidence, {stroke: "#D55E00", "stroke-dasharray": "4 3"});
      const txt2 = "F1 against confidence at IoU 0.50 (Ultralytics' curves: predictions " +
        "scored at or above each confidence; mean over classes with ground truth). Best mean " +
        "F1 " + fmt(C.best_f1) + " at confidence " + fmt(C.best_confidence) + " (maximum of " +
        "the mean F1 smoothed with a 0.1 box filter, as yolo val picks P and R; dashed line).";
      f2.setAttribute("aria-label", txt2);
      wrap.append(el("figure", {id: "f1-figure"}, f2, el("figcaption", {text: txt2})));
    });
  }

  // ---------------------------------------------------------------- confusion
  function cellOf(kind, i) {
    // [predicted row, true column] of an object, or null when it is not counted
    if (S.cm === "agnostic") {
      if (kind === "p") {
        const g = AGP[i];
        return g === -2 ? null : [P.cls[i], g >= 0 ? G.cls[g] : BG];
      }
      return AGG[i] === 1 ? [BG, G.cls[i]] : null;
    }
    if (kind === "p") {
      const s = predStat[i];
      if (s === 1) { const g = matchedGt(i, S.t); return [P.cls[i], g >= 0 ? G.cls[g] : P.cls[i]]; }
      if (s === 0 && P.cls[i] >= 0) return [P.cls[i], BG];
      return null;
    }
    if (gtStat[i] === 0 && G.cls[i] >= 0) return [BG, G.cls[i]];
    return null;
  }
  function confusionCounts() {
    const m = new Float64Array((K + 1) * (K + 1));
    for (let p = 0; p < NP; p++) { const c = cellOf("p", p); if (c) m[c[0] * (K + 1) + c[1]]++; }
    for (let g = 0; g < NG; g++) { const c = cellOf("g", g); if (c) m[c[0] * (K + 1) + c[1]]++; }
    return m;
  }
  let cmWrap = null;
  function confusion() {
    const b = body("confusion");
    if (!HAS) {
      b.append(el("p", {class: "note", text: "The protocol keeps no per-prediction match, " +
        "so there is no confusion matrix from it."}));
      return;
    }
    const norm = el("select", {id: "cm-norm", "aria-label": "normalization"});
    [["none", "counts"], ["true", "normalized per true class (columns sum to 1)"],
      ["pred", "normalized per predicted class (rows sum to 1)"]].forEach(([v, t]) =>
      norm.append(el("option", {value: v, text: t})));
    norm.addEventListener("change", () => { S.norm = norm.value; drawConfusion(); });
    const mode = el("select", {id: "cm-match", "aria-label": "which match"});
    if (AG) {
      mode.append(el("option", {value: "agnostic", text: "class-agnostic match (IoU > " +
        AG.iou.toFixed(2) + ", confidence > " + AG.conf.toFixed(2) + ")"}));
    }
    mode.append(el("option", {value: "own", text: "the evaluation's match (within a class)"}));
    mode.addEventListener("change", () => { S.cm = mode.value; S.sel = null; drawConfusion();
      gallery(); });
    b.append(el("p", {class: "note", id: "cm-definition"}));
    if (D.confusion && D.confusion.note) {
      b.append(el("p", {class: "note", text: "No class-agnostic matrix: " + D.confusion.note}));
    }
    b.append(el("div", {class: "controls"}, el("label", {}, "match ", mode),
      el("label", {}, " show ", norm)));
    cmWrap = el("div", {class: "scroll"});
    b.append(cmWrap);
  }
  function drawConfusion() {
    if (!cmWrap) return;
    const def = document.getElementById("cm-definition");
    def.dataset.match = S.cm;
    def.textContent = S.cm === "agnostic" ? "Rows: predicted class; columns: true class; " +
      "\u201cbackground\u201d is no match. Ultralytics' ConfusionMatrix " +
      "(result.confusion_matrix): per image, predictions with confidence > " +
      AG.conf.toFixed(2) + " in descending confidence each take the unmatched ground truth " +
      "of highest IoU > " + AG.iou.toFixed(2) + ", whatever its class (crowds left out). " +
      "Off the diagonal: a prediction of one class on an object of another. These " +
      "thresholds are fixed when the report is written (the IoU and confidence controls " +
      "apply to the evaluation's match). Click a cell to list its objects." :
      "Rows: predicted class; columns: true class; \u201cbackground\u201d is no match. " +
      "From the evaluation's own match at IoU \u2265 " + T[S.t].toFixed(2) +
      " and confidence \u2265 " + S.conf + ": the diagonal holds true positives, the " +
      "background column false positives, the background row missed ground truths. The " +
      "protocol matches within a class, so a prediction on an object of another class " +
      "counts as a false positive of its class and a miss of the other (see Cls in " +
      "Errors). Click a cell to list its objects.";
    const m = confusionCounts(), n = K + 1;
    const rs = new Float64Array(n), cs = new Float64Array(n);
    let max = 0;
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
      const v = m[i * n + j]; rs[i] += v; cs[j] += v; if (v > max) max = v;
    }
    const label = (k) => k === BG ? "background" : D.class_names[k];
    const table = el("table", {class: "cm", id: "confusion-table"});
    table.append(el("caption", {text: "predicted \u2193 \u00d7 true \u2192"}));
    const hr = el("tr", {}, el("th", {scope: "col", text: "pred \\ true"}));
    for (let j = 0; j < n; j++) {
      hr.append(el("th", {scope: "col", class: "col" + (j === BG ? " bg" : ""), text: label(j),
        title: label(j)}));
    }
    table.append(el("thead", {}, hr));
    const tb = el("tbody");
    for (let i = 0; i < n; i++) {
      const tr = el("tr", {}, el("th", {scope: "row", class: i === BG ? "bg" : "",
        text: label(i)}));
      for (let j = 0; j < n; j++) {
        const v = m[i * n + j];
        const td = el("td");
        if (v > 0) {
          const shown = S.norm === "true" ? v / cs[j] : S.norm === "pred" ? v / rs[i] : v;
          td.textContent = S.norm === "none" ? String(v) : shown.toFixed(2);
          td.dataset.count = v;
          td.dataset.pred = i; td.dataset.true = j;
          td.tabIndex = 0;
          const a = S.norm === "none" ? Math.sqrt(v / max) : shown;
          td.style.background = "rgba(0,114,178," + (0.08 + 0.8 * a).toFixed(3) + ")";
          if (a > 0.55) td.style.color = "#fff";
          td.setAttribute("aria-label", v + " objects: predicted " + label(i) + ", true " +
            label(j));
          if (S.sel && S.sel.pred === i && S.sel.true === j) td.classList.add("sel");
        }
        tr.append(td);
      }
      tb.append(tr);
    }
    table.append(tb);
    table.addEventListener("click", (e) => {
      const td = e.target.closest("td[data-count]");
      if (td) selectCell(+td.dataset.pred, +td.dataset.true);
    });
    table.addEventListener("keydown", (e) => {
      const td = e.target.closest("td[data-count]");
      if (td && (e.key === "Enter" || e.key === " ")) {
        e.preventDefault(); selectCell(+td.dataset.pred, +td.dataset.true);
      }
    });
    cmWrap.textContent = "";
    cmWrap.append(table);
  }
  function selectCell(i, j) {
    S.sel = {pred: i, true: j};
    drawConfusion();
    gallery();
    document.getElementById("images").scrollIntoView();
  }

  // ---------------------------------------------------------------- errors
  function errors() {
    const E = D.errors, b = body("errors");
    if (E.note) b.append(el("p", {class: "note", text: E.note}));
    if (E.tide) {
      const t = E.tide;
      b.append(el("h3", {text: "TIDE at IoU " + t.iou_threshold.toFixed(2) + " (background " +
        t.background_threshold.toFixed(2) + "): AP " + fmt(t.ap === null ? null : t.ap * 100, 2)}));
      const tbl = el("table", {id: "tide-table"}, el("caption", {text: "dAP: AP gained by " +
        "fixing that error type alone (in AP points)"}));
      tbl.append(el("thead", {}, el("tr", {}, el("th", {scope: "col", text: "error"}),
        el("th", {scope: "col", text: "dAP"}), el("th", {scope: "col", text: "count"}),
        el("th", {scope: "col", text: ""}))));
      const tb = el("tbody");
      const all = Object.entries(t.main).concat(Object.entries(t.special));
      const top = Math.max(1e-9, ...all.map(([, v]) => v || 0));
      all.forEach(([name, v]) => {
        const bar = sv("svg", {width: 160, height: 12, role: "img",
          "aria-label": name + " dAP " + fmt(v === null ? null : v * 100, 2)});
        bar.append(sv("rect", {class: "bar", x: 0, y: 1, height: 10,
          width: (160 * Math.max(0, v || 0) / top).toFixed(1)}));
        tb.append(el("tr", {"data-error": name}, el("td", {text: name}),
          el("td", {text: fmt(v === null ? null : v * 100, 2)}),
          el("td", {text: name in t.counts ? String(t.counts[name]) : ""}), el("td", {}, bar)));
      });
      tbl.append(tb);
      b.append(tbl);
    }
    if (E.worst.length) {
      b.append(el("h3", {text: "Worst images"}));
      b.append(el("p", {class: "note", text: E.worst_definition}));
      const tbl = el("table", {id: "worst-images"});
      tbl.append(el("thead", {}, el("tr", {}, ...["image", "AP", "TP", "FP", "FN"].map((h) =>
        el("th", {scope: "col", text: h})))));
      const tb = el("tbody");
      E.worst.forEach((w) => tb.append(el("tr", {}, el("td", {}, el("button", {
        text: D.images.stem[w.img], onclick: () => showImage(w.img)})), el("td", {text: fmt(w.ap)}),
      el("td", {text: String(w.tp)}), el("td", {text: String(w.fp)}),
      el("td", {text: String(w.fn)}))));
      tbl.append(tb);
      b.append(tbl);
    }
  }

  // ---------------------------------------------------------------- gallery
  let gal = null, galItems = [], galShown = 0, observer = null, sentinel = null;
  function visible(kind, i) {
    return kind === "p" ? predStat[i] !== 5 : true;
  }
  function objName(kind, i) { return kind === "p" ? predName(i) : gtName(i); }
  function galleryList() {
    const out = [], q = S.q.toLowerCase(), k = S.cls;
    const imgOk = (i) => !q || D.images.stem[i].toLowerCase().includes(q);
    if (S.sel) {
      for (let p = 0; p < NP; p++) {
        const c = cellOf("p", p);
        if (c && c[0] === S.sel.pred && c[1] === S.sel.true) out.push(["p", p]);
      }
      for (let g = 0; g < NG; g++) {
        const c = cellOf("g", g);
        if (c && c[0] === S.sel.pred && c[1] === S.sel.true) out.push(["g", g]);
      }
      return out;
    }
    if (S.outcome === "LE") {
      for (let r = 0; LE && r < LE.p.length; r++) {
        const p = LE.p[r];
        if ((k < 0 || P.cls[p] === k || (LE.g[r] >= 0 && G.cls[LE.g[r]] === k)) &&
          imgOk(P.img[p])) out.push(["l", r]);
      }
      return out;
    }
    if (S.outcome !== "any") {
      const want = S.outcome;
      for (let p = 0; p < NP; p++) {
        const s = predName(p);
        if (s === want || (want === "IG" && s === "NE")) {
          if ((k < 0 || P.cls[p] === k) && imgOk(P.img[p])) out.push(["p", p]);
        }
      }
      for (let g = 0; g < NG; g++) {
        if (gtName(g) === want && (k < 0 || G.cls[g] === k) && imgOk(G.img[g])) {
          out.push(["g", g]);
        }
      }
      return out;
    }
    for (let i = 0; i < NI; i++) {
      if (!imgOk(i)) continue;
      if (k >= 0) {
        let has = false;
        for (let j = byImgG.start[i]; j < byImgG.start[i + 1] && !has; j++) {
          has = G.cls[byImgG.order[j]] === k;
        }
        for (let j = byImgP.start[i]; j < byImgP.start[i + 1] && !has; j++) {
          const p = byImgP.order[j]; has = P.cls[p] === k && predStat[p] !== 5;
        }
        if (!has) continue;
      }
      out.push(["i", i]);
    }
    return out;
  }
  function boxTitle(kind, i) {
    if (kind === "g") return WORDS[gtName(i)] + " \u00b7 " + clsName(G.cls[i]) + " (ground truth)";
    const iou = HAS ? iouAt(i, S.t) : null;
    return WORDS[predName(i)] + " \u00b7 " + clsName(P.cls[i]) + " \u00b7 score " +
      fmt(P.score[i]) + (iou === null ? "" : " \u00b7 IoU " + fmt(iou));
  }
  function drawImage(i, focus, big) {
    const w = D.images.w[i], h = D.images.h[i];
    // an object's thumbnail is a crop around it (the whole image in the detail view)
    let vb = [0, 0, w, h];
    if (focus && !big) {
      const box = focus[0] === "p" ? P.box : G.box, j = 4 * focus[1];
      let bx0 = box[j], by0 = box[j + 1], bx1 = box[j] + box[j + 2], by1 = box[j + 1] + box[j + 3];
      if (focus[2] >= 0) {  // a label-error candidate: its ground truth in the crop too
        const q = 4 * focus[2];
        bx0 = Math.min(bx0, G.box[q]); by0 = Math.min(by0, G.box[q + 1]);
        bx1 = Math.max(bx1, G.box[q] + G.box[q + 2]); by1 = Math.max(by1, G.box[q + 1] +
          G.box[q + 3]);
      }
      const m = Math.max(bx1 - bx0, by1 - by0) * 0.6 + Math.max(w, h) / 50;
      const x0 = Math.max(0, bx0 - m), y0 = Math.max(0, by0 - m);
      const x1 = Math.min(w, bx1 + m), y1 = Math.min(h, by1 + m);
      if (x1 > x0 && y1 > y0) vb = [x0, y0, x1 - x0, y1 - y0];
    }
    const svg = sv("svg", {viewBox: vb.join(" "), preserveAspectRatio: "xMidYMid meet",
      role: "img"});
    const src = D.images.src ? D.images.src[i] : null;
    if (src) {
      svg.append(sv("image", {href: src, x: 0, y: 0, width: w, height: h}));
    } else {
      svg.append(sv("rect", {class: "ph", x: 0, y: 0, width: w, height: h}));
      if (D.images.given) {
        const t = sv("text", {x: vb[0] + vb[2] / 2, y: vb[1] + vb[3] / 2, "text-anchor": "middle",
          "font-size": Math.max(vb[2], vb[3]) / 16});
        t.textContent = "image missing"; svg.append(t);
      }
    }
    const counts = {TP: 0, FP: 0, FN: 0, IG: 0, NE: 0, NA: 0};
    const add = (kind, j, box) => {
      const mine = focus && ((focus[0] === kind && focus[1] === j) ||
        (kind === "g" && focus[2] === j));
      let name = objName(kind, j);
      if (name === "HIDE") { if (!mine) return; name = "NA"; }
      counts[name]++;
      const x = box[4 * j], y = box[4 * j + 1], bw = box[4 * j + 2], bh = box[4 * j + 3];
      if (focus && !big && !mine && (x > vb[0] + vb[2] || y > vb[1] + vb[3] || x + bw < vb[0] ||
        y + bh < vb[1])) return;  // outside the crop
      let cls = "box " + (name === "NE" ? "IG" : name);
      if (focus) cls += mine ? " focus" : " faint";
      const r = sv("rect", {class: cls, x: x, y: y, width: bw, height: bh});
      if (big) { const tt = sv("title"); tt.textContent = boxTitle(kind, j); r.append(tt); }
      svg.append(r);
      if (big && kind === "p" && (!focus || mine)) {
        const label = sv("text", {x: x, y: Math.max(y - 2, 10), "font-size": Math.max(w, h) / 60});
        const iou = HAS ? iouAt(j, S.t) : null;
        label.textContent = fmt(P.score[j], 2) + (iou === null ? "" : " IoU " + fmt(iou, 2));
        svg.append(label);
      }
    };
    for (let j = byImgG.start[i]; j < byImgG.start[i + 1]; j++) add("g", byImgG.order[j], G.box);
    for (let j = byImgP.start[i]; j < byImgP.start[i + 1]; j++) add("p", byImgP.order[j], P.box);
    return {svg, counts};
  }
  function leCaption(r) {
    const p = LE.p[r], g = LE.g[r];
    return "#" + (r + 1) + " " + KINDS[LE.kind[r]] + ": predicted " + clsName(P.cls[p]) +
      " (score " + fmt(LE.score[r]) + ")" + (g >= 0 ? " on ground truth " + clsName(G.cls[g]) +
      " (IoU " + fmt(LE.iou[r]) + ")" : " far from every ground truth (best IoU " +
      fmt(LE.iou[r]) + ")");
  }
  function focusOf(kind, i) {
    // the object(s) a gallery item is about: [kind, row, candidate's gt row or -1]
    if (kind === "i") return null;
    if (kind === "l") return ["p", LE.p[i], LE.g[i]];
    // a prediction of a class-agnostic cell: the ground truth it took, too
    if (kind === "p" && S.sel && S.cm === "agnostic" && AGP[i] >= 0) return ["p", i, AGP[i]];
    return [kind, i, -1];
  }
  function imageOf(kind, i) {
    return kind === "i" ? i : kind === "l" ? P.img[LE.p[i]] : kind === "p" ? P.img[i] : G.img[i];
  }
  function itemCaption(kind, i, counts) {
    if (kind === "l") return leCaption(i) + " \u00b7 " + D.images.stem[imageOf(kind, i)];
    if (kind === "i") {
      const parts = [D.images.stem[i]];
      if (HAS) parts.push(counts.TP + " TP", counts.FP + " FP", counts.FN + " FN");
      else parts.push(counts.NA + " predictions");
      if (D.images.given && !(D.images.src && D.images.src[i])) parts.push("image missing");
      return parts.join(" \u00b7 ");
    }
    const img = kind === "p" ? P.img[i] : G.img[i];
    const took = kind === "p" && S.sel && S.cm === "agnostic" && AGP[i] >= 0 ?
      " \u00b7 on ground truth " + clsName(G.cls[AGP[i]]) + " (class-agnostic match)" : "";
    return boxTitle(kind, i) + took + " \u00b7 " + D.images.stem[img];
  }
  function renderItem(kind, i) {
    const {svg, counts} = drawImage(imageOf(kind, i), focusOf(kind, i), false);
    const cap = itemCaption(kind, i, counts);
    svg.setAttribute("aria-label", cap);
    const f = el("figure", {class: "item", tabindex: 0, "data-item": kind + ":" + i,
      role: "listitem", "aria-label": cap}, svg, el("figcaption", {text: cap}));
    f.addEventListener("click", () => detail(kind, i));
    return f;
  }
  function more() {
    const end = Math.min(galItems.length, galShown + 60);
    const frag = document.createDocumentFragment();
    for (; galShown < end; galShown++) frag.append(renderItem(...galItems[galShown]));
    gal.append(frag);
    sentinel.hidden = galShown >= galItems.length;
  }
  let galCount = null, clearBtn = null;
  function gallerySetup() {
    const b = body("images");
    const legend = el("p", {class: "legend"});
    [["TP", "true positive"], ["FP", "false positive"], ["FN", "missed (false negative)"],
      ["IG", "ignored / not evaluated"]].forEach(([c, t]) => legend.append(el("span", {},
      el("span", {class: "sw", style: "border-color:var(--" + c.toLowerCase() + ");" +
        (c === "TP" ? "" : "border-top-style:" + (c === "FN" ? "dotted" : "dashed"))}), t)));
    b.append(legend);
    const cls = el("select", {id: "gallery-class", "aria-label": "class"});
    cls.append(el("option", {value: -1, text: "all classes"}));
    D.class_names.forEach((n, k) => cls.append(el("option", {value: k, text: n})));
    const out = el("select", {id: "gallery-outcome", "aria-label": "outcome"});
    [["any", "images"], ["TP", "true positives"], ["FP", "false positives"],
      ["FN", "missed"], ["IG", "ignored"]].concat(LE ? [["LE", "label-error candidates"]] : [])
      .forEach(([v, t]) => out.append(el("option", {value: v, text: t})));
    const q = el("input", {type: "search", id: "gallery-image", placeholder: "image name",
      "aria-label": "filter by image name"});
    clearBtn = el("button", {id: "gallery-clear", text: "clear cell selection", hidden: "",
      onclick: () => { S.sel = null; drawConfusion(); gallery(); }});
    cls.addEventListener("change", () => { S.cls = +cls.value; S.sel = null; drawConfusion();
      gallery(); });
    out.addEventListener("change", () => { S.outcome = out.value; S.sel = null; drawConfusion();
      gallery(); });
    q.addEventListener("input", () => { S.q = q.value; S.sel = null; gallery(); });
    b.append(el("div", {class: "controls"}, el("label", {}, "show ", out),
      el("label", {}, " class ", cls), q, clearBtn));
    galCount = el("p", {id: "gallery-count", "aria-live": "polite"});
    b.append(galCount);
    gal = el("div", {class: "gallery", id: "gallery", role: "list"});
    b.append(gal);
    sentinel = el("button", {id: "gallery-more", text: "show more", onclick: more});
    b.append(sentinel);
    if ("IntersectionObserver" in window) {
      observer = new IntersectionObserver((es) => { if (es.some((e) => e.isIntersecting)) more(); },
        {rootMargin: "600px"});
      observer.observe(sentinel);
    }
    gal.addEventListener("keydown", (e) => {
      const items = Array.from(gal.children), at = items.indexOf(document.activeElement);
      if (at < 0) return;
      let cols = 1;
      while (cols < items.length && items[cols].offsetTop === items[0].offsetTop) cols++;
      const go = {ArrowRight: 1, ArrowLeft: -1, ArrowDown: cols, ArrowUp: -cols}[e.key];
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault(); items[at].click(); return;
      }
      if (e.key === "Home" || e.key === "End" || go) {
        e.preventDefault();
        let to = e.key === "Home" ? 0 : e.key === "End" ? items.length - 1 : at + go;
        if (to >= items.length && galShown < galItems.length) {
          more(); to = Math.min(to, gal.children.length - 1);
        }
        to = Math.max(0, Math.min(to, gal.children.length - 1));
        gal.children[to].focus();
      }
    });
  }
  function gallery() {
    if (!gal) return;
    galItems = galleryList();
    galShown = 0;
    gal.textContent = "";
    let what = galItems.length + (S.outcome === "LE" && !S.sel ? " label-error candidates" :
      S.sel || S.outcome !== "any" ? " objects" : " images");
    if (S.sel) {
      const label = (k) => k === BG ? "background" : D.class_names[k];
      what += " (confusion cell: predicted " + label(S.sel.pred) + ", true " +
        label(S.sel.true) + ")";
    }
    galCount.textContent = what;
    galCount.dataset.total = galItems.length;
    clearBtn.hidden = !S.sel;
    more();
  }
  function showClass(k) {
    S.cls = k; S.sel = null;
    document.getElementById("gallery-class").value = k;
    drawConfusion(); gallery();
    document.getElementById("images").scrollIntoView();
  }
  function showImage(i) {
    S.q = D.images.stem[i]; S.sel = null; S.outcome = "any";
    document.getElementById("gallery-image").value = S.q;
    document.getElementById("gallery-outcome").value = "any";
    gallery(); detail("i", i);
  }
  function detail(kind, i) {
    let dlg = document.getElementById("detail");
    if (!dlg) { dlg = el("dialog", {id: "detail", "aria-label": "image detail"}); document.body
      .append(dlg); }
    dlg.textContent = "";
    const img = imageOf(kind, i);
    const {svg, counts} = drawImage(img, focusOf(kind, i), true);
    const cap = (kind === "l" ? leCaption(i) + " \u00b7 " : "") + itemCaption("i", img, counts);
    svg.setAttribute("aria-label", cap);
    const rows = el("tbody");
    const list = (start, order, kind2) => {
      for (let j = start[img]; j < start[img + 1]; j++) {
        const o = order[j];
        if (objName(kind2, o) === "HIDE") continue;
        rows.append(el("tr", {}, el("td", {text: boxTitle(kind2, o)})));
      }
    };
    list(byImgG.start, byImgG.order, "g");
    list(byImgP.start, byImgP.order, "p");
    dlg.append(el("button", {text: "close", onclick: () => dlg.close()}),
      el("h3", {text: cap}), svg,
      el("details", {}, el("summary", {text: "objects as text"}), el("table", {}, rows)));
    if (dlg.showModal) dlg.showModal(); else dlg.setAttribute("open", "");
  }

  function update() { recompute(); drawConfusion(); gallery(); }
  const steps = [["controls", controls], ["summary", summary], ["trust", trust],
    ["classes", classes], ["curves", curves], ["calibration", calibration],
    ["confusion", confusion], ["errors", errors],
    ["gallery", gallerySetup], ["recompute", recompute], ["matrix", drawConfusion],
    ["items", gallery]];
  for (const [name, step] of steps) {
    step();
    performance.mark("ioukit:" + name);
  }
  document.body.dataset.ready = "1";
""")

COMPARE_JS = _page(r"""
  const D = JSON.parse(document.getElementById("report-data").textContent);
  const [A, B] = D.names, COL = ["#0072B2", "#D55E00"];
  function signed(v) { return v === null ? "\u2014" : (v >= 0 ? "+" : "") + v.toFixed(3); }
  function bar(lower, delta, upper, span, label) {
    // the interval as a line and the delta as a dot on an axis centred at 0
    const w = 180, h = 14, x = (v) => w / 2 + (w / 2 - 4) * Math.max(-1, Math.min(1, v / span));
    const svg = sv("svg", {width: w, height: h, role: "img", "aria-label": label});
    svg.append(sv("line", {x1: w / 2, x2: w / 2, y1: 0, y2: h, stroke: "#8c8c8c"}));
    if (lower !== null && upper !== null) {
      svg.append(sv("line", {x1: x(lower), x2: x(upper), y1: h / 2, y2: h / 2,
        stroke: "#1b1b1b", "stroke-width": 2}));
    }
    if (delta !== null) {
      svg.append(sv("circle", {cx: x(delta), cy: h / 2, r: 4, fill: delta >= 0 ? COL[1] :
        COL[0]}));
    }
    return svg;
  }
  function span(rows) {
    let m = 1e-3;
    rows.forEach((r) => [r.lower, r.upper, r.delta].forEach((v) => {
      if (v !== null) m = Math.max(m, Math.abs(v));
    }));
    return m;
  }

  function summary() {
    const m = D.summary.mcnemar, p = document.getElementById("mcnemar");
    p.dataset.onlyA = m.only_a; p.dataset.onlyB = m.only_b;
    p.textContent = "McNemar test at IoU " + m.iou_threshold.toFixed(2) + ", score \u2265 " +
      m.score_threshold + ": " + m.only_a + " ground truths found only by " + A + ", " +
      m.only_b + " only by " + B + ", " + m.both + " by both, " + m.neither + " by neither; " +
      "p = " + (m.p_value === null ? "\u2014" : m.p_value.toPrecision(4)) +
      " (exact two-sided binomial test on the discordant pairs).";
  }
  function deltas() {
    const s = span(D.stats);
    document.querySelectorAll("#delta-table tbody tr").forEach((tr, i) => {
      const r = D.stats[i];
      tr.querySelector("td.bar").append(bar(r.lower, r.delta, r.upper, s, r.stat + ": " + B +
        " \u2212 " + A + " " + signed(r.delta) + ", interval [" + signed(r.lower) + ", " +
        signed(r.upper) + "]"));
    });
  }
  function classes() {
    const b = body("classes"), s = span(D.classes);
    b.append(el("p", {class: "note", text: "Per class: AP of each model, the delta " + B +
      " \u2212 " + A + " with its paired-bootstrap interval and P(" + B + " > " + A +
      "); the bar shows the interval (line) and the delta (dot: orange " + B + " ahead, blue " +
      A + " ahead) on an axis centred at 0. \u2014 : no ground truth."}));
    const cols = [["name", "Class"], ["gt", "GT"], ["a", "AP " + A], ["b", "AP " + B],
      ["delta", "delta"], ["lower", "interval"], ["p_better", "P(" + B + " > " + A + ")"]];
    const thead = el("thead"), tbody = el("tbody"), hr = el("tr");
    const rows = D.classes.map((r, k) => {
      const tr = el("tr", {"data-class": k});
      cols.forEach(([key]) => {
        const v = r[key];
        let text;
        if (key === "name") text = r.name;
        else if (key === "gt") text = String(v);
        else if (key === "delta") text = signed(v);
        else if (key === "lower") text = v === null ? "\u2014" : "[" + signed(r.lower) + ", " +
          signed(r.upper) + "]";
        else text = fmt(v);
        const td = el("td", {"data-col": key, text: text});
        if (typeof v === "number") td.dataset.value = v;
        tr.append(td);
      });
      tr.append(el("td", {}, bar(r.lower, r.delta, r.upper, s, r.name + ": " + signed(r.delta))));
      return {tr, r};
    });
    sortable(hr, tbody, rows, cols, (o, name) => o.r[name]);
    hr.append(el("th", {scope: "col", text: ""}));
    thead.append(hr);
    rows.forEach((o) => tbody.append(o.tr));
    b.append(el("div", {class: "scroll"}, el("table", {id: "class-table"},
      el("caption", {text: D.classes.length + " classes"}), thead, tbody)));
  }
  function curves() {
    const b = body("curves"), C = D.curves;
    if (!C[0] || !C[0].thresholds || !C[1] || !C[1].thresholds) {
      b.append(el("p", {class: "note", text: "No curves: " + ((C[0] && C[0].note) ||
        (C[1] && C[1].note) || "n/a")}));
      return;
    }
    const label = "IoU threshold of the PR curves";
    curveControls(b, C[0].thresholds, D.class_names, label, "mean over classes", (t, k, wrap) => {
      const f = chart(460, 320, "recall", "precision");
      const parts = [];
      C.forEach((c, m) => {
        const ys = k < 0 ? c.mean[t] : c.pr[t][k];
        if (!ys) { parts.push(D.names[m] + ": no curve"); return; }
        f.line(c.recall, ys, {stroke: COL[m], "stroke-width": 2.5, "data-model": m,
          "stroke-dasharray": m ? "6 3" : "none"});
        parts.push(D.names[m] + " (" + (m ? "orange, dashed" : "blue") + ", area " +
          fmt(ys.reduce((x, v) => x + v, 0) / ys.length) + ")");
      });
      const txt = "Precision against recall at IoU " + C[0].thresholds[t].toFixed(2) + ", " +
        (k < 0 ? "the mean over classes with ground truth" : D.class_names[k]) + ": " +
        parts.join("; ") + ". Interpolated precision at 101 recall points, as pycocotools.";
      f.setAttribute("aria-label", txt);
      wrap.append(el("figure", {id: "pr-figure"}, f, el("figcaption", {text: txt})));
    });
  }
  function disagreements() {
    const E = D.disagreements, b = body("disagreements");
    if (E.note) { b.append(el("p", {class: "note", text: E.note})); return; }
    b.append(el("p", {class: "note", text: "Ground truths found by one model only (TP at IoU " +
      E.iou.toFixed(2) + ", score \u2265 " + E.score + ", from each evaluation's own match): " +
      E.total_a + " only by " + A + ", " + E.total_b + " only by " + B + "; the " +
      E.rows.length + " images with the most of them."}));
    const tb = el("tbody");
    E.rows.forEach((r) => tb.append(el("tr", {"data-image": r.id}, el("td", {text: r.image}),
      el("td", {text: String(r.only_a)}), el("td", {text: String(r.only_b)}))));
    b.append(el("div", {class: "scroll"}, el("table", {id: "disagreement-table"},
      el("thead", {}, el("tr", {}, el("th", {scope: "col", text: "image"}),
        el("th", {scope: "col", text: "only " + A}), el("th", {scope: "col", text: "only " +
        B}))), tb)));
  }
  [summary, deltas, classes, curves, disagreements].forEach((step) => step());
  document.body.dataset.ready = "1";
""")
