# exporttimeline.tcl --
#
#	The timeline chart of the HTML flame graph page (exporthtml.tcl):
#	above the flame graph, the weight of the samples per bucket of time
#	(a memory profile: bytes allocated per bucket, with its live and
#	peak bytes as lines); dragging over it selects a range of time and
#	redraws the flame graph with the samples of that range only (each
#	node's self summed from its times, totals summed up the tree); "All
#	time" goes back to the whole profile. The data are the profile's
#	timeline and the times of the nodes as the page lays them out.
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::exportlib {
    # The chart's elements, put above the flame graph.
    variable timelineHtml {<div id="tlbox" hidden><div id="tlbar"><button
  id="tlreset" type="button">All time</button> <span id="tlinfo"></span></div>
<canvas id="timeline"></canvas></div>
}

    # Its style.
    variable timelineStyle {#tlbox { padding: 0 12px 6px; }
#tlbox[hidden] { display: none; }
#tlbar { padding: 2px 0 4px; font: 12px sans-serif; color: #444; }
#timeline { display: block; width: 100%; height: 90px; cursor: crosshair;
  border: 1px solid #ccc; box-sizing: border-box; }
}

    # Its script, inside the page's (it reads and changes the page's
    # arrays: tot, slf, sorted, zoom, and calls render).
    variable timelineScript {
  // The timeline (D.timeline): per bucket the weight, a memory profile's
  // live and peak bytes; per node with times [node, bucket, weight, ...].
  var TL = D.timeline || null, tlSel = null;
  if (TL) {
    var tlCanvas = document.getElementById("timeline");
    var tlCtx = tlCanvas.getContext("2d");
    var tlInfo = document.getElementById("tlinfo");
    var NB = TL.weights.length, tlW = 0, tlH = 90, tlDrag = null;
    var origTot = Array.prototype.slice.call(tot);
    var origSlf = Array.prototype.slice.call(slf);
    var tlMax = 1, tlMemMax = 1, b;
    for (b = 0; b < NB; b++) {
      if (TL.weights[b] > tlMax) tlMax = TL.weights[b];
      if (TL.peak && TL.peak[b] > tlMemMax) tlMemMax = TL.peak[b];
      if (TL.live && TL.live[b] > tlMemMax) tlMemMax = TL.live[b];
    }
    document.getElementById("tlbox").hidden = false;
    var secs = function (b) { return (b * TL.width / 1e9).toFixed(3) + " s"; };
    var tlDraw = function () {
      var dpr = window.devicePixelRatio || 1, bw, j, x, h, y;
      tlW = Math.max(100, tlCanvas.clientWidth || 800);
      tlCanvas.width = Math.round(tlW * dpr);
      tlCanvas.height = Math.round(tlH * dpr);
      tlCtx.setTransform(dpr, 0, 0, dpr, 0, 0);
      tlCtx.clearRect(0, 0, tlW, tlH);
      bw = tlW / Math.max(NB, 1);
      if (tlSel) {
        tlCtx.fillStyle = "rgba(120,160,255,0.25)";
        tlCtx.fillRect(tlSel[0] * bw, 0, (tlSel[1] - tlSel[0] + 1) * bw, tlH);
      }
      tlCtx.fillStyle = "hsl(20,75%,58%)";
      for (j = 0; j < NB; j++) {
        h = (tlH - 4) * TL.weights[j] / tlMax;
        tlCtx.fillRect(j * bw, tlH - h, Math.max(bw - 1, 1), h);
      }
      [[TL.live, "rgb(40,90,220)"], [TL.peak, "rgb(200,30,160)"]].forEach(function (s) {
        if (!s[0]) return;
        tlCtx.strokeStyle = s[1];
        tlCtx.beginPath();
        for (j = 0; j < NB; j++) {
          x = (j + 0.5) * bw;
          y = tlH - 2 - (tlH - 6) * s[0][j] / tlMemMax;
          if (j === 0) tlCtx.moveTo(x, y); else tlCtx.lineTo(x, y);
        }
        tlCtx.stroke();
      });
      tlInfo.textContent = (tlSel ? "range " + secs(tlSel[0]) + " to "
        + secs(tlSel[1] + 1) + ": " + amount(tot[0])
        : "all time, " + NB + " buckets of " + (TL.width / 1e6) + " ms: "
        + amount(tot[0]) + "; drag to select a range")
        + (TL.live ? " (bars: allocated; blue: live, magenta: peak)" : "");
      document.body.setAttribute("data-range", tlSel ? tlSel.join(" ") : "");
    };
    // The flame graph of buckets b0 to b1 (null: all time).
    var setRange = function (range) {
      var j, k, t, p;
      tlSel = range;
      if (!range) {
        for (j = 0; j < N; j++) { tot[j] = origTot[j]; slf[j] = origSlf[j]; }
      } else {
        for (j = 0; j < N; j++) { tot[j] = 0; slf[j] = 0; }
        for (j = 0; j < TL.times.length; j++) {
          t = TL.times[j];
          for (k = 1; k + 1 < t.length; k += 2) {
            if (t[k] >= range[0] && t[k] <= range[1]) slf[t[0]] += t[k + 1];
          }
        }
        for (j = 0; j < N; j++) tot[j] = slf[j];
        // Children come after their parents.
        for (j = N - 1; j > 0; j--) {
          p = parent[j];
          tot[p] += tot[j];
        }
      }
      sorted = new Array(N);
      zoom = 0;
      if (match) allShare();
      tlDraw();
      render();
    };
    var tlBucket = function (clientX) {
      var r = tlCanvas.getBoundingClientRect();
      var v = Math.floor((clientX - r.left) / (r.width / Math.max(NB, 1)));
      return Math.max(0, Math.min(NB - 1, v));
    };
    tlCanvas.addEventListener("mousedown", function (ev) {
      tlDrag = tlBucket(ev.clientX);
    });
    window.addEventListener("mouseup", function (ev) {
      var b1;
      if (tlDrag === null) return;
      b1 = tlBucket(ev.clientX);
      setRange([Math.min(tlDrag, b1), Math.max(tlDrag, b1)]);
      tlDrag = null;
    });
    document.getElementById("tlreset").addEventListener("click", function () {
      setRange(null);
    });
    window.addEventListener("resize", function () { tlDraw(); });
    tlDraw();
    TL.api = { setRange: setRange, range: function () { return tlSel; },
               buckets: NB, total: function () { return tot[0]; },
               totalOf: function (name) {
                 var j, s = 0;
                 for (j = 1; j < N; j++) {
                   if (labels[fr[j]] === name) s += tot[j];
                 }
                 return s;
               } };
  }
}
}

# TimelineData --
#
#	The JSON text of a loaded tree's timeline (t, from Load, of the
#	profile's tree treeKey), for the page: {"width": ns, "weights":
#	[...], "live": [...], "peak": [...], "times": [[node, bucket,
#	weight, ...], ...]} (node: its place in the page's layout), put in t
#	as timelineJson; t as it is when the profile has no timeline.

proc ::tclcprof::exportlib::TimelineData {t profile treeKey} {
    set tlKey [TimelineKey $treeKey]
    if {$tlKey eq "" && [dict exists $profile meta mode]
	    && [dict get $profile meta mode] eq "memory"} {
	set tlKey timeline
    }
    if {$tlKey eq "" || ![dict exists $profile $tlKey width_ns]} {
	return $t
    }
    set tl [dict get $profile $tlKey]
    set json "\{\"width\":[JsonNumber [dict get $tl width_ns]],\"weights\":\[[JsonNumbers [dict get $tl weights]]\]"
    foreach key {live peak} {
	if {[dict exists $tl $key]} {
	    append json ",\"$key\":\[[JsonNumbers [dict get $tl $key]]\]"
	}
    }
    set times {}
    set i 0
    foreach node [dict get $t node] {
	if {[dict exists $node times] && [llength [dict get $node times]]} {
	    lappend times "\[$i,[join [dict get $node times] ,]\]"
	}
	incr i
    }
    append json ",\"times\":\[[join $times ,]\]\}"
    dict set t timelineJson $json
    return $t
}
