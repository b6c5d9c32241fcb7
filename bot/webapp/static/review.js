"use strict";
// The Hard player's review in the Mini App: a 🔍 button on a finished game's result, and
// the reviewed moments, each on a small table as the player saw it then (their own
// cards, the table, the counts). The server sends only that; the page draws it.
(function () {
  const tg = window.Telegram && window.Telegram.WebApp ? window.Telegram.WebApp : null;
  const initData = tg ? tg.initData || "" : "";
  const base = location.pathname.endsWith("/") ? location.pathname : location.pathname + "/";
  const RED = new Set(["♥", "♦"]);
  const POLL_MS = 3000;
  const POLLS = 60;
  let review = null;
  let shown = 0;
  let offered = false;

  const $ = (id) => document.getElementById(id);
  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function where() {
    const q = new URLSearchParams(location.search);
    const start = tg && tg.initDataUnsafe ? tg.initDataUnsafe.start_param : "";
    return { game: q.get("game") || start || "", chat: q.get("review") };
  }

  async function api(path, body) {
    const options = { headers: { "X-Telegram-Init-Data": initData } };
    if (body) {
      options.method = "POST";
      options.headers["Content-Type"] = "application/json";
      options.body = JSON.stringify(body);
    }
    const response = await fetch(base + path, options);
    let data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    return { status: response.status, data: data };
  }

  async function load() {
    const at = where();
    let path = "api/review?game=" + encodeURIComponent(at.game);
    if (at.chat) path += "&chat=" + encodeURIComponent(at.chat);
    const { status, data } = await api(path);
    return status === 200 ? data : null;
  }

  // --- the moments -----------------------------------------------------------------------
  function cardNode(card, trumpSuit, extra) {
    const node = el("span", "rv-card" + (RED.has(card.suit) ? " red" : "") + (extra ? " " + extra : ""));
    if (card.suit === trumpSuit) node.classList.add("trump");
    node.dataset.card = card.card;
    node.appendChild(el("b", null, card.rank));
    node.appendChild(el("i", null, card.suit));
    return node;
  }

  function cardsOf(action) {
    // "beat 10♥ K♠": the hand's card is the last; "attack 9♥ 9♦", "transfer 9♥": all.
    const words = action.split(" ");
    if (words[0] === "beat") return new Set([words[2]]);
    return new Set(words.slice(1));
  }

  function showMoment(index) {
    shown = index;
    const m = review.moments[index];
    const t = review.texts;
    const v = m.view;
    const trumpSuit = v.trump.suit;
    document.querySelectorAll("#review-tabs button").forEach((b, i) => b.classList.toggle("on", i === index));
    $("review-line").textContent = m.line;
    $("review-taken").textContent = m.durak_taken + "%";
    $("review-best").textContent = m.durak_best + "%";
    const status = $("review-status");
    status.replaceChildren(cardNode(v.trump, trumpSuit, "small"), el("span", null, t.trump),
      el("span", "hint", t.stock + " " + v.stock));
    const players = $("review-players");
    players.replaceChildren(...v.players.filter((p) => !p.me).map((p) => {
      const box = el("span", "rv-player", p.name + " ");
      box.appendChild(el("b", null, String(p.cards)));
      return box;
    }));
    const table = $("review-table");
    table.replaceChildren();
    for (const [attack, cover] of v.table) {
      const pair = el("span", "rv-pair");
      pair.appendChild(cardNode(attack, trumpSuit));
      if (cover) pair.appendChild(cardNode(cover, trumpSuit, "cover"));
      table.appendChild(pair);
    }
    if (!v.table.length) table.appendChild(el("span", "hint", t.empty));
    $("review-hand-title").textContent = t.hand;
    const taken = cardsOf(m.taken);
    const best = cardsOf(m.best);
    const hand = $("review-hand");
    hand.replaceChildren(...v.hand.map((c) => {
      const mark = best.has(c.card) ? "best" : (taken.has(c.card) ? "taken" : "");
      return cardNode(c, trumpSuit, mark);
    }));
  }

  function showReview(data) {
    review = data;
    $("app").hidden = true;
    $("review").hidden = false;
    $("review-heading").textContent = data.heading || data.texts.title;
    $("review-table-title").textContent = data.texts.table;
    const tabs = $("review-tabs");
    tabs.replaceChildren(...(data.moments || []).map((m, i) => {
      const b = el("button", null, String(i + 1));
      b.type = "button";
      b.addEventListener("click", () => showMoment(i));
      return b;
    }));
    const any = data.moments && data.moments.length > 0;
    $("review-moment").hidden = !any;
    $("review-none").hidden = any;
    $("review-none").textContent = data.none || "";
    if (any) showMoment(Math.min(shown, data.moments.length - 1));
    document.body.dataset.review = "ready";
  }

  // --- asking from a finished game's result ----------------------------------------------
  async function offer() {
    const button = $("review-ask");
    if (document.body.dataset.phase !== "finished") { button.hidden = true; return; }
    if (offered) return;
    offered = true;
    const data = await load();
    if (!data) return;
    button.textContent = data.texts.button;
    button.hidden = false;
  }

  async function ask() {
    const at = where();
    const { status, data } = await api("api/review", { game: at.game, chat: at.chat });
    $("review-note").textContent = data && data.text ? data.text : String(status);
    for (let i = 0; i < POLLS; i++) {
      const found = await load();
      if (found && found.status === "done") return showReview(found);
      if (!data || !data.queued) return;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  $("review-ask").addEventListener("click", ask);
  new MutationObserver(offer).observe(document.body, { attributes: true, attributeFilter: ["data-phase"] });
  if (where().chat) {
    load().then((data) => { if (data && data.status === "done") showReview(data); });
  }
})();
