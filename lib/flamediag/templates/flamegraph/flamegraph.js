"use strict";
// flamediag flame graph: click to zoom, reset, regex search, hover details.
// Static code: it never builds markup from frame names (textContent only).
var svg, details, matchedText, searchButton, resetButton, frames = [], total = 0, fullWidth = 0, pad = 10;
var searching = null, zoomed = null;
var CHAR_WIDTH = 0.59 * 12;

function init() {
	svg = document.documentElement;
	details = document.getElementById("details");
	matchedText = document.getElementById("matched");
	searchButton = document.getElementById("search");
	resetButton = document.getElementById("unzoom");
	fullWidth = parseFloat(svg.getAttribute("width")) - 2 * pad;
	var groups = document.querySelectorAll("g.f");
	for (var i = 0; i < groups.length; i++) {
		var g = groups[i], rect = g.querySelector("rect"), label = parseTitle(g);
		g._x = parseFloat(rect.getAttribute("x"));
		g._w = parseFloat(rect.getAttribute("width"));
		g._y = parseFloat(rect.getAttribute("y"));
		g._fill = rect.getAttribute("fill");
		g._name = label.name;
		g._count = label.count;
		frames.push(g);
		if (g._w >= fullWidth - 0.01 && label.count > total) total = label.count;
		g.addEventListener("click", onClick);
		g.addEventListener("mouseover", onOver);
		g.addEventListener("mouseout", onOut);
	}
	searchButton.addEventListener("click", function () { searchPrompt(); });
	resetButton.addEventListener("click", function () { unzoom(); });
	window.addEventListener("keydown", function (e) {
		if ((e.ctrlKey || e.metaKey) && e.keyCode === 70) { e.preventDefault(); searchPrompt(); }
		if (e.keyCode === 27) { unzoom(); resetSearch(); }
	});
	var params = new URLSearchParams(document.location.search);
	if (params.get("s")) search(params.get("s"));
}

function parseTitle(g) {
	var text = g.querySelector("title").textContent;
	var m = /^([\s\S]*) \(([\d,.]+) [^,()]*, ([\d.]+)%\)$/.exec(text);
	if (!m) return { name: text, count: 0 };
	return { name: m[1], count: parseFloat(m[2].replace(/,/g, "")) };
}

function fitText(g, width) {
	var text = g.querySelector("text");
	var chars = Math.floor((width - 6) / CHAR_WIDTH);
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

function onClick(e) { zoom(e.currentTarget); }
function onOver(e) { details.textContent = e.currentTarget.querySelector("title").textContent; }
function onOut() { details.textContent = " "; }

function zoom(target) {
	var x0 = target._x, w0 = target._w, y0 = target._y, scale = fullWidth / w0;
	zoomed = target;
	resetButton.classList.remove("hide");
	for (var i = 0; i < frames.length; i++) {
		var g = frames[i], inside = g._x >= x0 - 0.0001 && g._x + g._w <= x0 + w0 + 0.0001;
		g.classList.remove("hide");
		g.classList.remove("parent");
		if (g._y > y0 && g._x <= x0 + 0.0001 && g._x + g._w >= x0 + w0 - 0.0001) {
			g.classList.add("parent");          // an ancestor: full width, faded
			place(g, pad, fullWidth);
		} else if (inside && g._y <= y0) {
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
		g.classList.remove("hide");
		g.classList.remove("parent");
		place(g, g._x, g._w);
	}
	if (searching) search(searching);
}

function searchPrompt() {
	if (searching) { resetSearch(); return; }
	var term = window.prompt("Enter a search term (regexp allowed, eg: ^ext4_)", "");
	if (term) search(term);
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
	try { re = new RegExp(term); } catch (err) { matchedText.textContent = "Bad regexp"; return 0; }
	resetSearch();
	searching = term;
	var spans = [];
	for (var i = 0; i < frames.length; i++) {
		var g = frames[i];
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

window.addEventListener("load", init);
