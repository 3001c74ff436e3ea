"use strict";
// flamediag flame graph: click to zoom, reset, regex search (ic: ignore case), hover details,
// Show idle. The zoom (?x=&y=), the search (?s=), ignore-case (?i=1) and idle (?idle=1) are kept
// in the URL, as flamegraph.pl does. Static code: it never builds markup from frame names
// (textContent only).
var svg, details, matchedText, searchButton, icButton, idleButton, resetButton;
var frames = [], fullWidth = 0, pad = 10, inverted = false, charWidth = 0.59 * 12;
var busyTotal = 0, allTotal = 0, showIdle = false, ignoreCase = false;
var searching = null, zoomed = null;

function init() {
	svg = document.documentElement;
	details = document.getElementById("details");
	matchedText = document.getElementById("matched");
	searchButton = document.getElementById("search");
	icButton = document.getElementById("ic");
	idleButton = document.getElementById("idle");
	resetButton = document.getElementById("unzoom");
	fullWidth = parseFloat(svg.getAttribute("width")) - 2 * pad;
	inverted = svg.getAttribute("data-inverted") === "1";
	charWidth = 0.59 * (parseFloat(svg.getAttribute("data-fontsize")) || 12);
	busyTotal = parseFloat(svg.getAttribute("data-busy")) || 0;
	allTotal = parseFloat(svg.getAttribute("data-all")) || busyTotal;
	var groups = document.querySelectorAll("g.f");
	for (var i = 0; i < groups.length; i++) {
		var g = groups[i], rect = g.querySelector("rect"), label = parseTitle(g);
		g._x0 = parseFloat(rect.getAttribute("x"));      // busy-view layout, as drawn
		g._w0 = parseFloat(rect.getAttribute("width"));
		g._x = g._x0;
		g._w = g._w0;
		g._y = parseFloat(rect.getAttribute("y"));
		g._fill = rect.getAttribute("fill");
		g._name = label.name;
		g._count = label.count;
		g._root = i === 0;
		frames.push(g);
		g.addEventListener("click", onClick);
		g.addEventListener("mouseover", onOver);
		g.addEventListener("mouseout", onOut);
	}
	searchButton.addEventListener("click", function () { searchPrompt(); });
	icButton.addEventListener("click", function () { toggleIgnoreCase(); });
	if (idleButton) idleButton.addEventListener("click", function () { setIdle(!showIdle); updateUrl(); });
	resetButton.addEventListener("click", function () { unzoom(); updateUrl(); });
	window.addEventListener("keydown", function (e) {
		if ((e.ctrlKey || e.metaKey) && e.keyCode === 70) { e.preventDefault(); searchPrompt(); }
		if ((e.ctrlKey || e.metaKey) && e.keyCode === 73) { e.preventDefault(); toggleIgnoreCase(); }
		if (e.keyCode === 27) { unzoom(); resetSearch(); updateUrl(); }
	});
	var params = new URLSearchParams(document.location.search);
	if (params.get("i") === "1") setIgnoreCase(true);
	if (params.get("idle") === "1") setIdle(true);
	if (params.get("x") !== null && params.get("y") !== null) {
		var target = frameAt(parseFloat(params.get("x")), parseFloat(params.get("y")));
		if (target) zoom(target);
	}
	if (params.get("s")) search(params.get("s"));
}

function parseTitle(g) {
	var text = g.querySelector("title").textContent;
	var m = /^([\s\S]*) \(([\d,.]+) ([^,()]*), ([\d.]+)%\)$/.exec(text);
	if (!m) return { name: text, count: 0, unit: "" };
	return { name: m[1], count: parseFloat(m[2].replace(/,/g, "")), unit: m[3] };
}

function currentTotal() { return showIdle ? allTotal : busyTotal; }

function setTitle(g) {
	var label = parseTitle(g), count = g._root ? currentTotal() : label.count;
	var pct = currentTotal() > 0 ? 100 * count / currentTotal() : 0;
	g._count = count;
	g.querySelector("title").textContent = label.name + " (" + count.toLocaleString("en-US") + " " + label.unit +
		", " + pct.toFixed(2) + "%)";
}

function frameAt(x, y) {
	for (var i = 0; i < frames.length; i++) {
		var g = frames[i];
		if (Math.abs(g._y - y) < 0.5 && x >= g._x - 0.5 && x <= g._x + g._w + 0.5 && !g.classList.contains("hide")) return g;
	}
	return null;
}

function fitText(g, width) {
	var text = g.querySelector("text");
	var chars = Math.floor((width - 6) / charWidth);
	if (chars < 3) { text.textContent = ""; return; }
	text.textContent = g._name.length <= chars ? g._name : g._name.substring(0, chars - 2) + "..";
}

function place(g, x, w) {
	var rect = g.querySelector("rect"), text = g.querySelector("text");
	rect.setAttribute("x", x.toFixed(2));
	rect.setAttribute("width", Math.max(w, 0).toFixed(2));
	text.setAttribute("x", (x + 3).toFixed(2));
	fitText(g, w);
}

function onClick(e) { zoom(e.currentTarget); updateUrl(); }
function onOver(e) { details.textContent = e.currentTarget.querySelector("title").textContent; }
function onOut() { details.textContent = " "; }

function isAncestor(g, y0) { return inverted ? g._y < y0 : g._y > y0; }
function isDescendantRow(g, y0) { return inverted ? g._y >= y0 : g._y <= y0; }

function zoom(target) {
	var x0 = target._x, w0 = target._w, y0 = target._y, scale = fullWidth / w0;
	zoomed = target;
	resetButton.classList.remove("hide");
	for (var i = 0; i < frames.length; i++) {
		var g = frames[i], inside = g._x >= x0 - 0.0001 && g._x + g._w <= x0 + w0 + 0.0001;
		g.classList.remove("parent");
		if (g.classList.contains("idle") && !showIdle) continue;
		g.classList.remove("hide");
		if (isAncestor(g, y0) && g._x <= x0 + 0.0001 && g._x + g._w >= x0 + w0 - 0.0001) {
			g.classList.add("parent");          // an ancestor: full width, faded
			place(g, pad, fullWidth);
		} else if (inside && isDescendantRow(g, y0)) {
			place(g, pad + (g._x - x0) * scale, g._w * scale);
		} else {
			g.classList.add("hide");
		}
	}
	if (searching) search(searching);
}

function unzoom() {
	zoomed = null;
	resetButton.classList.add("hide");
	for (var i = 0; i < frames.length; i++) {
		var g = frames[i];
		g.classList.remove("parent");
		g.classList.toggle("hide", g.classList.contains("idle") && !showIdle);
		place(g, g._x, g._w);
	}
	if (searching) search(searching);
}

// Busy view: idle frames hidden, widths of busy samples. All: idle laid out after the busy ones.
function setIdle(on) {
	showIdle = on && allTotal > 0;
	var ratio = showIdle ? busyTotal / allTotal : 1;
	for (var i = 0; i < frames.length; i++) {
		var g = frames[i];
		g._x = pad + (g._x0 - pad) * ratio;
		g._w = g._root ? fullWidth : g._w0 * ratio;
		setTitle(g);
	}
	if (idleButton) {
		idleButton.textContent = showIdle ? "Hide idle" : "Show idle";
		idleButton.classList.toggle("show", showIdle);
	}
	unzoom();
}

function toggleIgnoreCase() { setIgnoreCase(!ignoreCase); if (searching) search(searching); updateUrl(); }

function setIgnoreCase(on) {
	ignoreCase = on;
	icButton.classList.toggle("show", on);
}

function searchPrompt() {
	if (searching) { resetSearch(); updateUrl(); return; }
	var term = window.prompt("Enter a search term (regexp allowed, eg: ^ext4_)" + (ignoreCase ? ", ignoring case" : ""), "");
	if (term) { search(term); updateUrl(); }
}

function resetSearch() {
	searching = null;
	for (var i = 0; i < frames.length; i++) {
		frames[i].querySelector("rect").setAttribute("fill", frames[i]._fill);
		frames[i].classList.remove("match");
	}
	matchedText.textContent = " ";
	searchButton.classList.remove("show");
}

// Highlight frames whose name matches; the percentage counts each matched sample once
// (a match nested inside another match is not added again).
function search(term) {
	var re;
	try { re = new RegExp(term, ignoreCase ? "i" : ""); } catch (err) { matchedText.textContent = "Bad regexp"; return 0; }
	resetSearch();
	searching = term;
	var spans = [];
	for (var i = 0; i < frames.length; i++) {
		var g = frames[i];
		if (g.classList.contains("idle") && !showIdle) continue;
		if (!re.test(g._name)) continue;
		g.querySelector("rect").setAttribute("fill", "rgb(230,0,230)");
		g.classList.add("match");
		spans.push([g._x, g._x + g._w]);
	}
	spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
	var covered = 0, end = -1;
	for (var j = 0; j < spans.length; j++) {
		if (spans[j][0] >= end) { covered += spans[j][1] - spans[j][0]; end = spans[j][1]; }
		else if (spans[j][1] > end) { covered += spans[j][1] - end; end = spans[j][1]; }
	}
	var pct = fullWidth > 0 ? 100 * covered / fullWidth : 0;
	matchedText.textContent = "Matched: " + pct.toFixed(1) + "%";
	searchButton.classList.add("show");
	return pct;
}

function updateUrl() {
	var params = new URLSearchParams();
	if (zoomed) { params.set("x", zoomed._x.toFixed(2)); params.set("y", zoomed._y.toFixed(1)); }
	if (searching) params.set("s", searching);
	if (ignoreCase) params.set("i", "1");
	if (showIdle) params.set("idle", "1");
	var query = params.toString();
	try {
		history.replaceState(null, "", document.location.pathname + (query ? "?" + query : ""));
	} catch (err) { /* some viewers forbid history on file: URLs; the view still works */ }
}

window.addEventListener("load", init);
