# exporthtml.tcl --
#
#	tclcprof::export -format html: one self-contained page with an
#	interactive flame graph of a profile's call tree: canvas drawing,
#	click to zoom (ancestors kept), reset, regular expression search
#	with the share of the matched frames, a tooltip with each frame's
#	figures, flame or icicle orientation. Tcl frames are drawn in warm
#	colours, C functions in blue; frames too narrow to see are merged
#	into one grey frame per parent, so that only what can be seen is
#	drawn, whatever the size of the profile.
#
#	With a base profile (export -base, diff -format html) the page is
#	a differential flame graph: the new profile's tree, each frame
#	coloured by the change of its total against the frame of the same
#	call path in the base, red where it grew, blue where it shrank, as
#	shares of each profile's total (normalized) or in absolute weight;
#	a legend gives the scale and the tooltip base, new and change.
#
#	The tree goes into the page as JSON, breadth first, as
#	reportlib::Flatten lays it out: per node its frame number, self,
#	total and number of children (each node's children are contiguous,
#	so the counts are enough to rebuild it). Names are JSON strings
#	with '<', '>' and '&' escaped, so that no name can end the <script>
#	element that holds them; the page shows them only as text
#	(textContent, canvas), never as HTML. No script, style or font is
#	loaded from the network.
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::exportlib {
    # The page; @TITLE@, @DATA@ and @SCRIPT@ are filled in by Html.
    variable htmlPage {<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="tclcprof">
<title>@TITLE@</title>
<style>
body { margin: 0; font: 13px sans-serif; color: #222; background: #fff; }
#head { padding: 8px 12px 2px; }
#title { font-size: 16px; font-weight: bold; margin: 0; }
#info { color: #666; margin-top: 2px; }
#bar { display: flex; flex-wrap: wrap; align-items: center; gap: 8px;
  padding: 6px 12px; }
#search { width: 20em; font: 13px monospace; }
#search.bad { background: #fdd; }
#matched { color: #909; font-family: monospace; }
#legend { display: flex; flex-wrap: wrap; align-items: center; gap: 6px;
  padding: 2px 12px; font: 12px monospace; }
#legend[hidden] { display: none; }
#lbar { display: inline-block; width: 14em; height: 12px;
  border: 1px solid #999; background: linear-gradient(to right,
  rgb(40,90,220), rgb(236,232,222), rgb(220,30,30)); }
#ltext { color: #444; font-family: sans-serif; }
#wrap { padding: 0 12px 12px; }
#flame { display: block; width: 100%; cursor: pointer; }
#tip { position: fixed; display: none; pointer-events: none; z-index: 10;
  max-width: 70em; padding: 4px 6px; overflow: hidden; white-space: pre;
  font: 12px monospace; background: #ffffe6; border: 1px solid #999;
  box-shadow: 1px 1px 4px rgba(0, 0, 0, 0.25); }
@TLSTYLE@</style>
</head>
<body>
<div id="head"><div id="title"></div><div id="info"></div></div>
<div id="bar">
<button id="reset" type="button">Reset zoom</button>
<button id="orient" type="button">Icicle</button>
<label>Search <input id="search" type="text" spellcheck="false"
  placeholder="regular expression" autocomplete="off"></label>
<span id="matched"></span>
<button id="scale" type="button" hidden>Absolute</button>
<label id="threadbox" hidden>Thread <select id="thread"><option
  value="0">all</option></select></label>
</div>
<div id="legend" hidden><span id="lminus"></span><span id="lbar"></span><span
  id="lplus"></span><span id="ltext"></span></div>
@TLHTML@<div id="wrap"><canvas id="flame"></canvas></div>
<div id="tip"></div>
<script id="tclcprof-data" type="application/json">@DATA@</script>
<script>@SCRIPT@</script>
</body>
</html>
}

    # The script of the page.
    variable htmlScript {
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("tclcprof-data").textContent);
  var labels = D.labels, kinds = D.kinds, extra = D.extra;
  var fr = D.frame, tot = D.total, slf = D.self, nk = D.nkids, calls = D.calls;
  var N = tot.length, ROW = 17, MINW = 1, MAXH = 32000;
  var canvas = document.getElementById("flame");
  var ctx = canvas.getContext("2d");
  var tip = document.getElementById("tip");
  var search = document.getElementById("search");
  var matchedEl = document.getElementById("matched");
  var orientEl = document.getElementById("orient");
  var scaleEl = document.getElementById("scale");

  // The tree: node i's children are first[i] .. first[i+1]-1.
  var first = new Int32Array(N + 1), parent = new Int32Array(N);
  var depth = new Int32Array(N), maxDepth = 0, i, c;
  first[0] = 1;
  for (i = 0; i < N; i++) first[i + 1] = first[i] + nk[i];
  parent[0] = -1;
  for (i = 0; i < N; i++) {
    for (c = first[i]; c < first[i + 1]; c++) {
      parent[c] = i;
      depth[c] = depth[i] + 1;
    }
    if (depth[i] > maxDepth) maxDepth = depth[i];
  }

  // Children heaviest first (then by name), sorted when first drawn.
  var sorted = new Array(N);
  function kids(n) {
    var k = sorted[n], j;
    if (!k) {
      k = [];
      for (j = first[n]; j < first[n + 1]; j++) k.push(j);
      k.sort(function (a, b) {
        var la = labels[fr[a]], lb = labels[fr[b]];
        return tot[b] - tot[a] || (la < lb ? -1 : la > lb ? 1 : 0);
      });
      sorted[n] = k;
    }
    return k;
  }

  // Colours: Tcl frames warm, C functions blue, other kinds green,
  // merged frames grey, matches of the search magenta.
  var colours = new Array(labels.length);
  function colour(f) {
    var col = colours[f];
    if (col) return col;
    var s = labels[f], h = 0, j, a, b;
    for (j = 0; j < s.length; j++) h = (h * 31 + s.charCodeAt(j)) | 0;
    h = h >>> 0;
    a = (h % 997) / 997;
    b = ((h >>> 11) % 991) / 991;
    if (f === 0) {
      col = "hsl(40,18%,78%)";
    } else if (kinds[f] === 1) {
      col = "hsl(" + Math.round(200 + 30 * a) + "," + Math.round(55 + 25 * b)
        + "%," + Math.round(60 + 14 * b) + "%)";
    } else if (kinds[f] === 2) {
      col = "hsl(" + Math.round(95 + 40 * a) + ",45%," + Math.round(55 + 12 * b) + "%)";
    } else {
      col = "hsl(" + Math.round(4 + 48 * a) + "," + Math.round(78 + 17 * b)
        + "%," + Math.round(55 + 12 * b) + "%)";
    }
    colours[f] = col;
    return col;
  }

  function pct(part, whole) {
    return whole > 0 ? (100 * part / whole).toFixed(2) + "%" : "-";
  }
  function amount(v) {
    if (D.unit === "bytes") {
      var units = ["B", "KiB", "MiB", "GiB", "TiB"], u = 0;
      while (v >= 1023.5 && u < units.length - 1) { v /= 1024; u++; }
      return (u === 0 ? Math.round(v) : v < 9.95 ? v.toFixed(1)
        : v.toFixed(0)) + " " + units[u];
    }
    if (D.unit === "objects") {
      if (v !== Math.round(v)) v = +v.toFixed(1);
      return v + (v === 1 ? " object" : " objects");
    }
    if (!D.exact) {
      if (v !== Math.round(v)) v = +v.toFixed(1);
      return v + (v === 1 ? " sample" : " samples");
    }
    if (v < 1e3) return Math.round(v) + " ns";
    if (v < 1e6) return (v / 1e3).toFixed(1) + " \u00b5s";
    if (v < 1e9) return (v / 1e6).toFixed(2) + " ms";
    return (v / 1e9).toFixed(3) + " s";
  }

  // A differential flame graph (D.diff, a base profile given): per node
  // the total and self of its call path in the base (-1: not in the
  // base), the base's whole total, the factor that puts base weights
  // in this profile's unit (other sampling rates), and whether changes
  // are of shares of each profile's total (normalized) or of weights.
  var DF = D.diff || null, btot = null, bslf = null, normalized = false;
  var maxChange = 0, NEUTRAL = [236, 232, 222];
  var RED = [220, 30, 30], BLUE = [40, 90, 220];
  if (DF) {
    btot = DF.base;
    bslf = DF.bself;
    normalized = DF.normalize;
  }
  function baseOf(n) {
    return btot[n] < 0 ? 0 : btot[n] * DF.factor;
  }
  function change(n) {
    if (normalized) {
      return tot[n] / tot[0] - (btot[n] < 0 || DF.baseTotal <= 0 ? 0
                                : btot[n] / DF.baseTotal);
    }
    return tot[n] - baseOf(n);
  }
  // The largest change drawn at full colour, the others in proportion.
  function scaleChanges() {
    var j, c;
    maxChange = 0;
    for (j = 0; j < N; j++) {
      c = Math.abs(change(j));
      if (c > maxChange) maxChange = c;
    }
  }
  function mix(to, t) {
    return "rgb(" + Math.round(NEUTRAL[0] + (to[0] - NEUTRAL[0]) * t) + ","
      + Math.round(NEUTRAL[1] + (to[1] - NEUTRAL[1]) * t) + ","
      + Math.round(NEUTRAL[2] + (to[2] - NEUTRAL[2]) * t) + ")";
  }
  function diffColour(n) {
    var c = change(n);
    return mix(c > 0 ? RED : BLUE,
               maxChange > 0 ? Math.min(1, Math.abs(c) / maxChange) : 0);
  }
  function sign(v) {
    return v < 0 ? "\u2212" : "+";
  }
  function shareChange(d) {
    return sign(d) + (100 * Math.abs(d)).toFixed(2) + "% of all";
  }
  function weightChange(d) {
    return sign(d) + amount(Math.abs(d));
  }
  function showScale() {
    var what;
    if (!DF) return;
    document.getElementById("lminus").textContent = normalized
      ? shareChange(-maxChange) : weightChange(-maxChange);
    document.getElementById("lplus").textContent = normalized
      ? shareChange(maxChange) : weightChange(maxChange);
    what = "colour: the change of each frame's total against the base ("
      + (normalized ? "its share of each profile's total" : "absolute")
      + "), red slower, blue faster; width: the new profile; grey: frames"
      + " too narrow to show";
    if (DF.gone > 0) {
      what += "; in the base only, not shown: " + pct(DF.gone, DF.baseTotal)
        + " of the base";
    }
    document.getElementById("ltext").textContent = what;
    scaleEl.textContent = normalized ? "Absolute" : "Normalized";
    document.body.setAttribute("data-scale", normalized ? "normalized" : "absolute");
  }

  var zoom = 0, flame = true, match = null, inMatch = null;
  var matchAll = 0, matchZoom = 0;
  var layout = [], rows = [], W = 0, H = 0;

  function put(type, node, x, w, d, extraInfo) {
    var e = { type: type, node: node, x: x, w: w, depth: d,
              label: type === "merged" ? "" : labels[fr[node]] };
    if (extraInfo) {
      e.count = extraInfo.count;
      e.total = extraInfo.total;
      e.first = extraInfo.first;
    }
    layout.push(e);
    (rows[d] || (rows[d] = [])).push(e);
  }

  function rowY(d) {
    return flame ? H - (d + 1) * ROW : d * ROW;
  }

  function draw(e) {
    var y = rowY(e.depth), f, t, max;
    if (y + ROW < 0 || y > H || e.w <= 0) return;
    if (e.type === "merged") {
      ctx.fillStyle = "#c4c4c4";
    } else {
      f = fr[e.node];
      ctx.fillStyle = match && match[f] ? "#e23ee2"
        : DF ? diffColour(e.node) : colour(f);
    }
    e.fill = ctx.fillStyle;
    ctx.globalAlpha = e.type === "ancestor" ? 0.55 : 1;
    ctx.fillRect(e.x, y, e.w > 2 ? e.w - 1 : e.w, ROW - 1);
    ctx.globalAlpha = 1;
    if (e.type !== "merged" && e.w > 28) {
      t = e.label;
      max = Math.floor((e.w - 6) / charW);
      if (t.length > max) t = max > 2 ? t.slice(0, max - 2) + ".." : "";
      if (t) {
        ctx.fillStyle = "#000";
        ctx.fillText(t, e.x + 3, y + ROW / 2);
      }
    }
  }

  var charW = 7;
  function render() {
    var dpr = window.devicePixelRatio || 1, a, stack, n, x, w, ks, j, k, kw, cx;
    var nn, nt, nx, big, zt, scale;
    H = Math.min((maxDepth + 1) * ROW, MAXH);
    canvas.style.height = H + "px";
    W = Math.max(100, canvas.clientWidth || document.body.clientWidth || 800);
    canvas.width = Math.round(W * dpr);
    canvas.height = Math.round(H * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    ctx.font = "12px monospace";
    ctx.textBaseline = "middle";
    charW = ctx.measureText("MMMMMMMMMM").width / 10 || 7;
    layout = [];
    rows = [];
    zt = tot[zoom];
    scale = zt > 0 ? W / zt : 0;
    for (a = parent[zoom]; a >= 0; a = parent[a]) put("ancestor", a, 0, W, depth[a]);
    stack = [zoom, 0];
    while (stack.length) {
      x = stack.pop();
      n = stack.pop();
      w = tot[n] * scale;
      put("frame", n, x, w, depth[n]);
      ks = kids(n);
      cx = x;
      nn = 0;
      nt = 0;
      nx = 0;
      big = -1;
      for (j = 0; j < ks.length; j++) {
        k = ks[j];
        kw = tot[k] * scale;
        if (kw >= MINW) {
          stack.push(k, cx);
        } else {
          if (nn === 0) {
            nx = cx;
            big = k;
          }
          nn++;
          nt += tot[k];
        }
        cx += kw;
      }
      if (nn > 0) {
        put("merged", n, nx, nt * scale, depth[n] + 1,
            { count: nn, total: nt, first: big });
      }
    }
    for (j = 0; j < layout.length; j++) draw(layout[j]);
    showScale();
    if (match) zoomShare();
    showMatched();
    document.body.setAttribute("data-zoom", labels[fr[zoom]]);
    document.body.setAttribute("data-orientation", flame ? "flame" : "icicle");
    document.body.setAttribute("data-frames", String(layout.length));
  }

  function hit(clientX, clientY) {
    var r = canvas.getBoundingClientRect(), x = clientX - r.left;
    var y = clientY - r.top, d, row, j, e;
    if (x < 0 || y < 0 || x > r.width || y > r.height) return null;
    d = flame ? Math.floor((H - y) / ROW) : Math.floor(y / ROW);
    row = rows[d];
    if (!row) return null;
    for (j = 0; j < row.length; j++) {
      e = row[j];
      if (x >= e.x && x < e.x + Math.max(e.w, 1)) return e;
    }
    return null;
  }

  function describe(e) {
    var lines = [], n = e.node, f = fr[n], whole = tot[0], zt = tot[zoom];
    if (e.type === "merged") {
      lines.push(e.count + (e.count === 1 ? " frame" : " frames")
                 + " too narrow to show, under " + labels[f]);
      lines.push("total: " + amount(e.total) + " (" + pct(e.total, whole)
                 + " of all, " + pct(e.total, zt) + " of zoom)");
      lines.push("click to zoom into the largest");
      return lines.join("\n");
    }
    lines.push(labels[f]);
    if (n > 0) {
      if (kinds[f] === 1) lines.push("C function" + (extra[f] ? " in " + extra[f] : ""));
      else if (kinds[f] === 0) lines.push("Tcl " + (extra[f] || "frame"));
    }
    if (DF) return describeChange(e, lines);
    lines.push("total: " + amount(tot[n]) + " (" + pct(tot[n], whole) + " of all"
               + (e.type === "ancestor" ? ")" : ", " + pct(tot[n], zt) + " of zoom)"));
    lines.push("self:  " + amount(slf[n]) + " (" + pct(slf[n], whole) + " of all"
               + (e.type === "ancestor" ? ")" : ", " + pct(slf[n], zt) + " of zoom)"));
    if (calls && calls.length && calls[n] >= 0) lines.push("calls: " + calls[n]);
    return lines.join("\n");
  }

  // The tooltip of a differential flame graph: base, new and change.
  function describeChange(e, lines) {
    var n = e.node, whole = tot[0], zt = tot[zoom], b = btot[n], d, ratio, share;
    lines.push("base:  " + (b < 0 ? "none (not in the base)"
      : amount(baseOf(n)) + " (" + pct(b, DF.baseTotal) + " of all)"));
    lines.push("new:   " + amount(tot[n]) + " (" + pct(tot[n], whole) + " of all"
      + (e.type === "ancestor" ? ")" : ", " + pct(tot[n], zt) + " of zoom)"));
    d = tot[n] - baseOf(n);
    ratio = b < 0 ? "new" : b > 0 ? "\u00d7" + (tot[n] / baseOf(n)).toFixed(2) : "from 0";
    share = tot[n] / whole - (b < 0 || DF.baseTotal <= 0 ? 0 : b / DF.baseTotal);
    lines.push("delta: " + (normalized
      ? shareChange(share) + " (" + weightChange(d) + ", " + ratio + ")"
      : weightChange(d) + " (" + ratio + ", " + shareChange(share) + ")"));
    lines.push("self:  base " + (bslf[n] < 0 ? "none" : amount(bslf[n] * DF.factor))
      + ", new " + amount(slf[n]));
    if (calls && calls.length && calls[n] >= 0) lines.push("calls: " + calls[n]);
    return lines.join("\n");
  }

  // The share of the matched frames: the totals of the outermost
  // matches, so that nested matches (recursion) count once.
  function allShare() {
    var j, p;
    inMatch = new Uint8Array(N);
    matchAll = 0;
    for (j = 1; j < N; j++) {
      p = parent[j];
      if (inMatch[p]) {
        inMatch[j] = 1;
      } else if (match[fr[j]]) {
        inMatch[j] = 1;
        matchAll += tot[j];
      }
    }
  }
  function zoomShare() {
    var stack, n, j;
    if (inMatch[zoom]) {
      matchZoom = tot[zoom];
      return;
    }
    matchZoom = 0;
    stack = [zoom];
    while (stack.length) {
      n = stack.pop();
      for (j = first[n]; j < first[n + 1]; j++) {
        if (match[fr[j]]) matchZoom += tot[j];
        else if (nk[j]) stack.push(j);
      }
    }
  }
  function showMatched() {
    if (!match) return;
    matchedEl.textContent = "Matched: " + pct(matchAll, tot[0]) + " of all, "
      + pct(matchZoom, tot[zoom]) + " of zoom (" + amount(matchAll) + ")";
  }

  function setSearch(text) {
    var re, f;
    if (text === "") {
      match = null;
      search.className = "";
      matchedEl.textContent = "";
      render();
      return;
    }
    try {
      re = new RegExp(text);
    } catch (err) {
      match = null;
      search.className = "bad";
      matchedEl.textContent = "invalid regular expression";
      render();
      return;
    }
    search.className = "";
    match = new Uint8Array(labels.length);
    for (f = 1; f < labels.length; f++) match[f] = re.test(labels[f]) ? 1 : 0;
    allShare();
    render();
  }

  function setZoom(n) {
    zoom = n;
    render();
  }

  canvas.addEventListener("mousemove", function (ev) {
    var e = hit(ev.clientX, ev.clientY), tx, ty;
    if (!e) {
      tip.style.display = "none";
      return;
    }
    tip.textContent = describe(e);
    tip.style.display = "block";
    tx = ev.clientX + 14;
    ty = ev.clientY + 14;
    if (tx + tip.offsetWidth > window.innerWidth) tx = Math.max(0, ev.clientX - tip.offsetWidth - 8);
    if (ty + tip.offsetHeight > window.innerHeight) ty = Math.max(0, ev.clientY - tip.offsetHeight - 8);
    tip.style.left = tx + "px";
    tip.style.top = ty + "px";
  });
  canvas.addEventListener("mouseleave", function () {
    tip.style.display = "none";
  });
  canvas.addEventListener("click", function (ev) {
    var e = hit(ev.clientX, ev.clientY);
    if (!e) return;
    tip.style.display = "none";
    setZoom(e.type === "merged" ? e.first : e.node);
  });
  document.getElementById("reset").addEventListener("click", function () {
    setZoom(0);
  });
  // Threads' roots (a profile of several threads): "all", or zoom on
  // one thread's root, which makes it the whole width.
  var threadEl = document.getElementById("thread");
  (D.threads || []).forEach(function (n) {
    var o = document.createElement("option");
    o.value = String(n);
    o.textContent = labels[fr[n]].replace(/ \[thread\]$/, "");
    threadEl.appendChild(o);
  });
  if ((D.threads || []).length) {
    document.getElementById("threadbox").hidden = false;
  }
  threadEl.addEventListener("change", function () {
    setZoom(Number(threadEl.value));
  });
  orientEl.addEventListener("click", function () {
    flame = !flame;
    orientEl.textContent = flame ? "Icicle" : "Flame";
    render();
  });
  scaleEl.addEventListener("click", function () {
    normalized = !normalized;
    scaleChanges();
    render();
  });
  search.addEventListener("input", function () {
    setSearch(search.value);
  });
  var pending = false;
  window.addEventListener("resize", function () {
    if (pending) return;
    pending = true;
    window.requestAnimationFrame(function () {
      pending = false;
      render();
    });
  });

  document.getElementById("title").textContent = D.title;
  document.getElementById("info").textContent = D.info;
  if (DF) {
    scaleEl.hidden = false;
    document.getElementById("legend").hidden = false;
    scaleChanges();
  }

  // @TLSCRIPT@
  // For scripts (and tests): what is drawn where.
  window.tclcprofFlame = {
    layout: function () { return layout; },
    rowHeight: ROW,
    height: function () { return H; },
    zoom: function () { return zoom; },
    orientation: function () { return flame ? "flame" : "icicle"; },
    nodes: N,
    // Differential pages: a node's change (a share of the whole, or a
    // weight), the largest, the scale shown.
    change: function (n) { return DF ? change(n) : null; },
    maxChange: function () { return maxChange; },
    scale: function () { return DF ? (normalized ? "normalized" : "absolute") : null; },
    // The timeline chart (exporttimeline.tcl), null without one.
    timeline: function () { return TL ? TL.api : null; }
  };
  render();
})();
}
}

# Html --
#
#	The HTML flame graph page of a loaded tree (see Load); with diff
#	(see DiffTree), the differential flame graph of t against a base.

proc ::tclcprof::exportlib::Html {t {diff {}}} {
    variable htmlPage
    variable htmlScript
    variable timelineHtml
    variable timelineStyle
    variable timelineScript

    set meta [dict get $t meta]
    set exact [dict get $t exact]
    set labels {}
    set kinds {}
    set extra {}
    set f 0
    foreach name [dict get $t fname] kind [dict get $t fkind] {
	if {$f == 0} {
	    lappend labels {"all"}
	    lappend kinds 0
	    lappend extra {""}
	} else {
	    lappend labels [JsonString [Label $name $kind]]
	    switch -- $kind {
		tcl {
		    lappend kinds 0
		    set what [FrameAttr $t $f tclkind]
		    if {[set origin [FrameAttr $t $f origin]] ne ""} {
			# An event handler: where it was scheduled.
			append what " from " $origin
		    }
		    lappend extra [JsonString $what]
		}
		c {
		    lappend kinds 1
		    lappend extra [JsonString [FrameAttr $t $f module]]
		}
		default {
		    lappend kinds 2
		    lappend extra {""}
		}
	    }
	}
	incr f
    }
    set nkids [lmap k [dict get $t kids] {llength $k}]
    set self [JsonNumbers [dict get $t self]]
    set total [JsonNumbers [dict get $t total]]
    set calls {}
    if {[dict get $t hasFig]} {
	set calls [join [lmap fig [dict get $t fig] {
	    expr {[llength $fig] ? [lindex $fig 0] : -1}
	}] ,]
    }
    # What the weights are: samples, ns, or a memory profile's bytes or
    # objects.
    set unit [expr {$exact ? "ns" : "samples"}]
    if {[dict exists $meta unit] && [dict get $meta unit] in {bytes objects}} {
	set unit [dict get $meta unit]
    }
    set title [Title $meta]
    set info [Info $meta]
    set diffData ""
    if {[dict size $diff]} {
	set bmeta [dict get $diff meta]
	set title "[Title $meta] against [Title $bmeta]"
	set info "new: $info \u2014 base: [Info $bmeta]"
	if {[dict get $diff factor] != 1} {
	    append info " (base weights rescaled to the new profile's sampling\
		    rate: \u00d7[format %.4g [dict get $diff factor]])"
	}
	set diffData ",\n\"diff\":\{\"normalize\":[expr {[dict get $diff normalize]
		? "true" : "false"}],\"baseTotal\":[JsonNumber [dict get $diff total]],\
		\"factor\":[JsonNumber [dict get $diff factor]],\
		\"gone\":[JsonNumber [dict get $diff gone]],\
		\n\"base\":\[[JsonNumbers [dict get $diff base]]\],\
		\n\"bself\":\[[JsonNumbers [dict get $diff bself]]\]\}"
    }
    # The timeline chart (exporttimeline.tcl), of a profile with one.
    set tlData ""
    set tlParts [list @TLHTML@ "" @TLSTYLE@ ""]
    set script [string map [list "// @TLSCRIPT@" ""] $htmlScript]
    if {[dict exists $t timelineJson] && ![dict size $diff]} {
	set tlData ",\n\"timeline\":[dict get $t timelineJson]"
	set tlParts [list @TLHTML@ $timelineHtml @TLSTYLE@ $timelineStyle]
	set script [string map [list "// @TLSCRIPT@" $timelineScript] \
		$htmlScript]
    } else {
	set script [string map [list "// @TLSCRIPT@" \
		"var TL = null;"] $htmlScript]
    }
    set data "\{\"title\":[JsonString $title],\"info\":[JsonString $info],\
	    \"exact\":[expr {$exact ? "true" : "false"}],\"unit\":\"$unit\",\n\"labels\":\[[join $labels ,]\],\n\"kinds\":\[[join $kinds ,]\],\n\"extra\":\[[join $extra ,]\],\n\"frame\":\[[join [dict get $t fid] ,]\],\n\"self\":\[$self\],\n\"total\":\[$total\],\n\"nkids\":\[[join $nkids ,]\],\n\"threads\":\[[join [dict values [ThreadRoots $t]] ,]\],\n\"calls\":\[$calls\]$diffData$tlData\}"
    return [string map [list @TITLE@ [HtmlText $title] @DATA@ $data \
	    @SCRIPT@ $script {*}$tlParts] $htmlPage]
}

# JsonNumbers --
#	A list of weights as the text of a JSON array's elements.

proc ::tclcprof::exportlib::JsonNumbers {list} {
    set s [join $list ,]
    if {[regexp {^(?:(?:0|[1-9][0-9]*)(?:,|$))*$} $s]} {
	return $s
    }
    return [join [lmap w $list {JsonNumber $w}] ,]
}

# HtmlText --
#	A string as HTML text.

proc ::tclcprof::exportlib::HtmlText {s} {
    string map {& &amp; < &lt; > &gt; \" &quot;} $s
}

# Info --
#	A line about the run: mode, clock, samples or calls, duration, and
#	what makes the profile doubtful (reportlib::Doubts).

proc ::tclcprof::exportlib::Info {meta} {
    set parts {}
    foreach {key what} {mode mode clock clock} {
	if {[dict exists $meta $key]} {
	    lappend parts [expr {$key eq "mode" ? "mode [dict get $meta $key]"
		    : "[dict get $meta $key] clock"}]
	}
    }
    if {[dict exists $meta view] && [dict exists $meta unit]} {
	# A memory profile: which figures (alloc, live or peak), in what.
	lappend parts "[dict get $meta view] [dict get $meta unit]"
    }
    if {[dict exists $meta samples]} {
	lappend parts "[dict get $meta samples] samples"
    }
    if {[dict exists $meta calls]} {
	lappend parts "[dict get $meta calls] calls"
    }
    if {[dict exists $meta elapsed]
	    && [string is double -strict [dict get $meta elapsed]]} {
	lappend parts [format "%.2f s" [dict get $meta elapsed]]
    }
    set info [join $parts {, }]
    set doubts [Doubts $meta]
    if {[llength $doubts]} {
	append info "; warning: [join $doubts {, }]"
    }
    return $info
}

# DiffTree --
#
#	What a differential flame graph needs of its base: for every node
#	of the loaded tree t, the total and self of the nodes of the loaded
#	base tree b at the same call path (the same names and kinds from
#	the root; siblings of the same name and kind in the base count
#	together), or -1 where the base has no such path. Both trees must
#	be weighed alike (samples, or ns).
#
# Results:
#	A dict: base and bself (lists, one element per node of t), total
#	(the base's whole), gone (the weight of the base's paths that t
#	does not have, counted at the outermost), factor (what base weights
#	are multiplied by to be in t's unit: the ratio of the sampling
#	rates of two sampled profiles, else 1), normalize, meta (the
#	base's). Errors: TCLCPROF VALUE -base when one tree is exact and
#	the other sampled.

proc ::tclcprof::exportlib::DiffTree {t b normalize} {
    if {[dict get $t exact] != [dict get $b exact]} {
	set unit [expr {[dict get $b exact] ? "ns (an exact tree)"
		: "samples (a sampled tree)"}]
	Fail {VALUE -base} "the base is weighed in $unit and the profile\
		is not: compare trees of the same kind (see -view)"
    }
    # The base's call paths: each node's path id, and per path its
    # parent path, total and self.
    set bkids [dict get $b kids]
    set bname [MatchNames $b]
    set bkind [dict get $b kind]
    set btotal [dict get $b total]
    set bself [dict get $b self]
    set pathOf [lrepeat [llength $bkids] 0]
    set ptotal [list [lindex $btotal 0]]
    set pself [list [lindex $bself 0]]
    set pparent [list -1]
    set i 0
    foreach ks $bkids {
	set p [lindex $pathOf $i]
	foreach c $ks {
	    set key $p\u0000[lindex $bkind $c]\u0000[lindex $bname $c]
	    if {[info exists path($key)]} {
		set q $path($key)
		lset ptotal $q [expr {[lindex $ptotal $q] + [lindex $btotal $c]}]
		lset pself $q [expr {[lindex $pself $q] + [lindex $bself $c]}]
	    } else {
		set q [llength $ptotal]
		set path($key) $q
		lappend ptotal [lindex $btotal $c]
		lappend pself [lindex $bself $c]
		lappend pparent $p
	    }
	    lset pathOf $c $q
	}
	incr i
    }

    # The new tree's nodes found in the base, breadth first.
    set kids [dict get $t kids]
    set name [MatchNames $t]
    set kind [dict get $t kind]
    set npath [lrepeat [llength $kids] -1]
    lset npath 0 0
    set matched(0) 1
    set i 0
    foreach ks $kids {
	set p [lindex $npath $i]
	if {$p >= 0} {
	    foreach c $ks {
		set key $p\u0000[lindex $kind $c]\u0000[lindex $name $c]
		if {[info exists path($key)]} {
		    lset npath $c $path($key)
		    set matched($path($key)) 1
		}
	    }
	}
	incr i
    }
    set base [lmap p $npath {
	expr {$p < 0 ? -1 : [lindex $ptotal $p]}
    }]
    set bselfs [lmap p $npath {
	expr {$p < 0 ? -1 : [lindex $pself $p]}
    }]
    set gone 0
    set q 0
    foreach parent $pparent total $ptotal {
	if {![info exists matched($q)] && [info exists matched($parent)]} {
	    set gone [expr {$gone + $total}]
	}
	incr q
    }

    # Samples at other rates: the base's weights in the new profile's
    # samples (the weight of a sample is one sampling period).
    set factor 1
    if {![dict get $t exact]} {
	set rate [MetaRate [dict get $t meta]]
	set brate [MetaRate [dict get $b meta]]
	if {$rate ne "" && $brate ne "" && $rate != $brate} {
	    set factor [expr {double($rate) / $brate}]
	}
    }
    dict create base $base bself $bselfs total [lindex $btotal 0] \
	    gone $gone factor $factor normalize $normalize \
	    meta [dict get $b meta]
}

# MatchNames --
#
#	The names by which the nodes of a loaded tree are matched with a
#	base's: their own, but for the program's main script, the frame
#	<script NAME> of a Tcl node with no Tcl frame above it, which is
#	<script> whatever its file, so that two versions of a program in
#	files of different names share their call paths. Scripts sourced
#	by others keep their names.

proc ::tclcprof::exportlib::MatchNames {t} {
    set names [dict get $t name]
    set kinds [dict get $t kind]
    # Whether a node has a Tcl frame above it, breadth first.
    set above [lrepeat [llength $names] 0]
    set i 0
    foreach ks [dict get $t kids] {
	set a [expr {[lindex $above $i] || [lindex $kinds $i] eq "tcl"}]
	foreach c $ks {
	    lset above $c $a
	    if {!$a && [lindex $kinds $c] eq "tcl"
		    && [string match "<script *>" [lindex $names $c]]} {
		lset names $c "<script>"
	    }
	}
	incr i
    }
    return $names
}

# MetaRate --
#	A profile's requested sampling rate, if it is a positive finite
#	number, else "".

proc ::tclcprof::exportlib::MetaRate {meta} {
    if {![dict exists $meta rate_requested]} {
	return ""
    }
    set rate [dict get $meta rate_requested]
    if {[string is double -strict $rate]
	    && ![catch {expr {$rate > 0 && $rate < Inf}} ok] && $ok} {
	return $rate
    }
    return ""
}
