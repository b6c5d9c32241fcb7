"use strict";
// The Mini App's rating chart: the player's rating over all groups after each rated
// game, one season (month) after another, drawn as SVG (no library). The request carries
// Telegram's signed init data; the server answers with this player's history only.
(function () {
  const tg = window.Telegram && window.Telegram.WebApp ? window.Telegram.WebApp : null;
  const initData = tg ? tg.initData || "" : "";
  const base = location.pathname.replace(/[^/]*$/, "");
  const SVG = "http://www.w3.org/2000/svg";
  const HEIGHT = 220;
  const PAD = { left: 44, right: 12, top: 22, bottom: 16 };
  let data = null;

  const $ = (id) => document.getElementById(id);
  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function applyTheme() {
    const root = document.documentElement;
    root.dataset.scheme = tg && tg.colorScheme === "dark" ? "dark" : "light";
  }

  // Round gridline steps (10, 20, 25, 50, 100 …) for about four lines.
  function step(span) {
    const raw = Math.max(span / 4, 1);
    const power = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 2.5, 5, 10]) if (raw <= m * power) return m * power;
    return 10 * power;
  }

  function draw() {
    const box = $("rating-chart");
    box.replaceChildren();
    const points = data.points;
    if (points.length === 0) return;
    const width = Math.max(240, box.clientWidth - 8);
    const values = points.flatMap((p, i) => (i === 0 ? [p.before, p.after] : [p.after]));
    const gridStep = step(Math.max(...values) - Math.min(...values) || 40);
    const low = Math.floor(Math.min(...values) / gridStep) * gridStep;
    const high = Math.max(Math.ceil(Math.max(...values) / gridStep) * gridStep, low + gridStep);
    // One x position per rated game, the first game's "before" at 0.
    const count = points.length;
    const x = (i) => PAD.left + ((width - PAD.left - PAD.right) * i) / count;
    const y = (v) => PAD.top + ((HEIGHT - PAD.top - PAD.bottom) * (high - v)) / (high - low);
    const chart = svg("svg", { viewBox: `0 0 ${width} ${HEIGHT}`, width: width, height: HEIGHT });
    const format = new Intl.NumberFormat(data.lang);
    for (let v = low; v <= high + 1e-9; v += gridStep) {
      chart.appendChild(svg("line", { class: "grid", x1: PAD.left, x2: width - PAD.right, y1: y(v), y2: y(v) }));
      chart.appendChild(svg("text", { class: "axis", x: PAD.left - 6, y: y(v) + 4, "text-anchor": "end" }, format.format(v)));
    }
    // A new season starts everyone afresh: a dashed line and the month's name.
    points.forEach((p, i) => {
      if (i > 0 && p.season === points[i - 1].season) return;
      const at = x(i);
      if (i > 0) chart.appendChild(svg("line", { class: "season", x1: at, x2: at, y1: PAD.top - 14, y2: HEIGHT - PAD.bottom }));
      chart.appendChild(svg("text", { class: "season-name", x: at + 4, y: PAD.top - 8 }, p.season_name));
    });
    // Within a season the line runs from game to game; a new season starts a new line.
    const segments = [];
    points.forEach((p, i) => {
      if (i === 0 || p.season !== points[i - 1].season) segments.push([[x(i), y(p.before)]]);
      segments[segments.length - 1].push([x(i + 1), y(p.after)]);
    });
    for (const segment of segments) {
      const line = segment.map(([a, b], k) => (k ? "L" : "M") + a.toFixed(1) + "," + b.toFixed(1)).join("");
      const first = segment[0][0];
      const end = segment[segment.length - 1][0];
      chart.appendChild(svg("path", { class: "area", d: `${line}L${end},${y(low)}L${first},${y(low)}Z` }));
      chart.appendChild(svg("path", { class: "line", d: line }));
    }
    points.forEach((p, i) => {
      const last = i === count - 1;
      chart.appendChild(svg("circle", { class: last ? "dot last" : "dot", cx: x(i + 1), cy: y(p.after), r: last ? 5 : count > 40 ? 0 : 2.5 }));
    });
    box.appendChild(chart);
  }

  function render() {
    const t = data.texts;
    document.documentElement.lang = data.lang || "en";
    $("rating-title").textContent = t.title;
    $("rating-subtitle").textContent = t.subtitle;
    const now = data.current;
    $("rating-now").hidden = !now;
    $("rating-empty").hidden = !!now;
    $("rating-empty").textContent = t.empty;
    $("rating-chart").hidden = !now;
    if (now) {
      $("rating-value").textContent = now.shown;
      $("rating-season").textContent = now.season_name;
      $("rating-games").textContent = now.games;
      const last = $("rating-last");
      last.textContent = now.last;
      const delta = data.points[data.points.length - 1];
      last.className = delta.after > delta.before ? "up" : delta.after < delta.before ? "down" : "hint";
      $("rating-chart").setAttribute("aria-label", t.title + ": " + now.shown);
    }
    draw();
    document.body.dataset.points = String(data.points.length);
    document.body.dataset.ready = "1";
  }

  function banner(text) {
    const node = $("banner");
    node.hidden = !text;
    node.textContent = text || "";
  }

  async function load() {
    try {
      const response = await fetch(base + "api/rating", { headers: { "X-Telegram-Init-Data": initData } });
      if (response.status !== 200) {
        banner(String(response.status));
        document.body.dataset.ready = "error";
        return;
      }
      data = await response.json();
      render();
    } catch (e) {
      banner("…");
      setTimeout(load, 2000);
    }
  }

  applyTheme();
  if (tg) {
    tg.ready();
    if (tg.expand) tg.expand();
    if (tg.onEvent) tg.onEvent("themeChanged", () => { applyTheme(); if (data) draw(); });
  }
  window.addEventListener("resize", () => { if (data) draw(); });
  load();
})();
