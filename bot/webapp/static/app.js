"use strict";
// The Durak Mini App: shows one seat's view of the table and sends its moves.
// Every request carries Telegram's signed init data; the server checks it each time.
(function () {
  const tg = window.Telegram && window.Telegram.WebApp ? window.Telegram.WebApp : null;
  const initData = tg ? tg.initData || "" : "";
  const query = new URLSearchParams(location.search);
  const base = location.pathname.endsWith("/") ? location.pathname : location.pathname + "/";
  const RED = new Set(["♥", "♦"]);
  let game = query.get("game") || (tg && tg.initDataUnsafe && tg.initDataUnsafe.start_param) || "";
  let state = null;
  let receivedAt = 0;
  let chosenAttack = null; // a table card the defender picked to beat
  let chosenCard = null; // a hand card that beats several table cards
  let selected = []; // hand cards picked for one attack or throw-in (one rank, or any legal set)
  let source = null;
  let busy = false;
  let toastTimer = 0;

  const $ = (id) => document.getElementById(id);
  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  // --- Telegram integration ------------------------------------------------------------
  function applyTheme() {
    const root = document.documentElement;
    if (tg) {
      root.dataset.tg = "1";
      const params = tg.themeParams || {};
      for (const key of Object.keys(params)) {
        root.style.setProperty("--tg-theme-" + key.replace(/_/g, "-"), params[key]);
      }
      root.dataset.scheme = tg.colorScheme === "dark" ? "dark" : "light";
    } else {
      const dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
      root.dataset.scheme = dark ? "dark" : "light";
    }
  }
  function haptic(kind) {
    const h = tg && tg.HapticFeedback;
    if (!h) return;
    try {
      if (kind === "tap") h.impactOccurred("light");
      else if (kind === "select") h.selectionChanged();
      else h.notificationOccurred(kind);
    } catch (e) { /* older clients */ }
  }
  function backButton() {
    const b = tg && tg.BackButton;
    if (!b) return;
    if (chosenAttack || chosenCard || selected.length) b.show(); else b.hide();
  }

  // --- talking to the bot --------------------------------------------------------------
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

  function connect() {
    if (source) source.close();
    const url = base + "api/events?game=" + encodeURIComponent(game) +
      "&init_data=" + encodeURIComponent(initData);
    source = new EventSource(url);
    source.addEventListener("state", (event) => {
      banner(null);
      show(JSON.parse(event.data));
    });
    source.onopen = () => banner(null);
    source.onerror = () => {
      banner(texts().offline || "…");
      if (source.readyState === EventSource.CLOSED) {
        // Refused (not a network drop): find out why, or try again shortly.
        setTimeout(recover, 1000);
      }
    };
  }

  async function recover() {
    try {
      const { status, data } = await api("api/state?game=" + encodeURIComponent(game));
      if (status === 401) return banner(texts().auth_failed || "401");
      if (status === 403) return banner(texts().not_seated || "403");
      if (status === 200 && data) show(data);
    } catch (e) { /* still offline */ }
    connect();
  }

  async function move(action) {
    if (busy || !state) return;
    busy = true;
    haptic("tap");
    chosenAttack = chosenCard = null;
    selected = [];
    try {
      const { status, data } = await api("api/move", { game: game, action: action, step: state.step });
      if (status === 200) show(data);
      else if (status === 401) banner(texts().auth_failed);
      else {
        haptic("error");
        toast(data && data.error ? data.error : String(status));
        if (data && data.state) show(data.state);
      }
    } catch (e) {
      banner(texts().offline);
    } finally {
      busy = false;
      render();
    }
  }

  async function post(path) {
    haptic("tap");
    const { status, data } = await api(path, { game: game });
    if (status === 200 && data) show(data);
    else toast(data && data.error ? data.error : String(status));
  }

  // --- state ---------------------------------------------------------------------------
  function texts() { return (state && state.texts) || {}; }

  function show(next) {
    if (next.phase === "moved") {
      if (next.next) {
        game = next.next;
        const url = new URL(location.href);
        url.searchParams.set("game", game);
        history.replaceState(null, "", url.toString());
        connect();
      }
      return;
    }
    // A move's response can arrive after the event of a later change: keep the newer.
    if (state && next.game === state.game && next.step < state.step) return;
    const wasMine = state && state.legal && state.legal.length > 0;
    if (state && next.step !== state.step) {
      chosenAttack = chosenCard = null;
      selected = [];
    }
    state = next;
    receivedAt = Date.now() / 1000;
    if (!wasMine && next.legal && next.legal.length > 0) haptic("warning");
    render();
  }

  function legal() { return new Set(state ? state.legal : []); }

  function beatsWith(card) {
    return state.legal.filter((a) => a.startsWith("beat ") && a.split(" ")[2] === card);
  }

  // Every legal attack (or throw-in) as its cards: ["J♥", "J♦"].
  function attacks() {
    return state.legal.filter((a) => a.startsWith("attack ")).map((a) => a.split(" ").slice(1));
  }

  // A legal attack holding every card of ``cards`` (and maybe more).
  function attackWith(cards) {
    return attacks().some((a) => cards.every((c) => a.includes(c)));
  }

  // The legal action that plays exactly the selected cards, if any.
  function selectedAction() {
    if (!selected.length) return null;
    const match = attacks().find((a) => a.length === selected.length && selected.every((c) => a.includes(c)));
    return match ? "attack " + match.join(" ") : null;
  }

  function playable(card, set) {
    if (chosenAttack) return set.has("beat " + chosenAttack + " " + card);
    if (selected.length) return selected.includes(card) || attackWith([...selected, card]);
    return set.has("attack " + card) || beatsWith(card).length > 0;
  }

  // A card that can attack: alone it plays at once; a card that may join others of a
  // legal multi-card attack is selected, and one button plays the selection.
  function tapAttack(card) {
    if (selected.includes(card)) {
      selected = selected.filter((c) => c !== card);
    } else if (selected.length && attackWith([...selected, card])) {
      selected = [...selected, card];
    } else if (attacks().some((a) => a.length > 1 && a.includes(card))) {
      selected = [card];
    } else {
      return move("attack " + card);
    }
    haptic("select");
    render();
  }

  function tapHand(card) {
    const set = legal();
    if (!playable(card, set)) return;
    if (chosenAttack) return move("beat " + chosenAttack + " " + card);
    if (set.has("attack " + card) || selected.length) return tapAttack(card);
    const beats = beatsWith(card);
    if (beats.length === 1) return move(beats[0]);
    chosenCard = chosenCard === card ? null : card;
    haptic("select");
    render();
  }

  function tapTable(card) {
    const set = legal();
    if (chosenCard && set.has("beat " + card + " " + chosenCard)) return move("beat " + card + " " + chosenCard);
    const can = state.legal.some((a) => a.startsWith("beat " + card + " "));
    if (!can) return;
    chosenAttack = chosenAttack === card ? null : card;
    chosenCard = null;
    haptic("select");
    render();
  }

  // --- drawing -------------------------------------------------------------------------
  function cardLabel(card) {
    const suit = card.slice(-1);
    const rank = card.slice(0, -1);
    const ranks = texts().ranks || {};
    return { rank: ranks[rank] || rank, suit: suit };
  }

  function cardNode(card, extra) {
    const { rank, suit } = cardLabel(card);
    const node = el("button", "card" + (RED.has(suit) ? " red" : "") + (extra ? " " + extra : ""));
    node.type = "button";
    node.dataset.card = card;
    if (state && state.trump_suit === suit) node.classList.add("trump");
    const corner = el("span", "corner", rank);
    corner.appendChild(el("i", null, suit));
    node.appendChild(corner);
    node.appendChild(el("span", "pip", suit));
    node.setAttribute("aria-label", rank + suit);
    return node;
  }

  function pile(id, label, value, card) {
    const node = $(id);
    node.replaceChildren();
    if (card) node.appendChild(cardNode(card, "small"));
    node.appendChild(el("span", null, label));
    if (value !== null) node.appendChild(el("b", null, String(value)));
  }

  function render() {
    if (!state) return;
    const t = texts();
    const set = legal();
    document.documentElement.lang = state.lang || "en";
    document.body.dataset.phase = state.phase;
    document.body.dataset.step = String(state.step);
    document.body.dataset.legal = String(state.legal.length);
    $("title").textContent = state.title ? t.title + " · " + state.title : t.title;
    const running = state.trump !== null;
    $("status").hidden = !running;
    if (running) {
      pile("trump", t.trump, null, state.trump);
      pile("stock", t.stock, state.stock, null);
      pile("discard", t.discard, state.discard, null);
    }

    const opponents = $("opponents");
    opponents.replaceChildren();
    for (const p of state.players) {
      if (p.me) {
        $("me-name").textContent = p.name;
        $("me-label").textContent = p.label;
        $("me-takes").hidden = !p.taking;
        $("me-takes").textContent = t.takes;
        $("me").classList.toggle("waiting", p.waiting);
        continue;
      }
      const box = el("div", "player role-" + p.role + (p.waiting ? " waiting" : "") + (p.me ? " me" : ""));
      box.dataset.seat = String(p.seat);
      const name = el("div", "name", p.name);
      if (p.taking) name.appendChild(el("span", "badge", t.takes));
      box.appendChild(name);
      if (p.label) box.appendChild(el("div", "label", p.label));
      if (!p.me && p.cards > 0) {
        const backs = el("div", "backs");
        for (let i = 0; i < Math.min(p.cards, 12); i++) backs.appendChild(el("span", "back"));
        box.appendChild(backs);
      }
      opponents.appendChild(box);
    }

    const table = $("table");
    table.replaceChildren();
    for (const [attack, cover] of state.table) {
      const pair = el("div", "pair");
      const a = cardNode(attack, "attack");
      a.dataset.attack = attack;
      if (!cover && state.legal.some((x) => x.startsWith("beat " + attack + " "))) {
        if (!chosenCard || set.has("beat " + attack + " " + chosenCard)) a.classList.add("target");
        a.addEventListener("click", () => tapTable(attack));
      }
      if (chosenAttack === attack) a.classList.add("chosen");
      pair.appendChild(a);
      if (cover) pair.appendChild(cardNode(cover, "cover"));
      table.appendChild(pair);
    }
    $("empty").hidden = state.table.length > 0 || !running;
    $("empty").textContent = t.empty;
    const finished = state.phase === "finished";
    $("felt").hidden = !running || finished;
    $("hand").hidden = finished;
    $("me").hidden = !running || finished;

    const hand = $("hand");
    hand.replaceChildren();
    for (const card of state.hand) {
      const ok = playable(card, set);
      const node = cardNode(card, ok ? "playable" : (set.size ? "dim" : ""));
      if (chosenCard === card) node.classList.add("chosen");
      if (selected.includes(card)) node.classList.add("selected");
      node.disabled = !ok;
      node.addEventListener("click", () => tapHand(card));
      hand.appendChild(node);
    }

    const actions = $("actions");
    actions.replaceChildren();
    const play = selectedAction();
    if (play) {
      // One button for the selection, in hand order: "Attack with J♥ J♦".
      const cards = state.hand.filter((c) => selected.includes(c)).map((c) => {
        const { rank, suit } = cardLabel(c);
        return rank + suit;
      });
      const template = state.table.length ? t.throw_in_with : t.attack_with;
      const button = el("button", "send-selection", (template || "{cards}").replace("{cards}", cards.join(" ")));
      button.type = "button";
      button.dataset.action = play;
      button.addEventListener("click", () => move(play));
      actions.appendChild(button);
    }
    for (const action of state.legal) {
      const label = state.labels[action];
      // Multi-card attacks are made by selecting cards, not one button each.
      if (!label || action.startsWith("attack ")) continue;
      const button = el("button", action === "take" ? "secondary" : "", label);
      button.type = "button";
      button.dataset.action = action;
      button.addEventListener("click", () => move(action));
      actions.appendChild(button);
    }

    $("prompt").textContent = chosenCard ? t.pick_attack : (selected.length ? t.pick_more : state.prompt);

    const lobby = state.phase === "lobby";
    $("lobby").hidden = !lobby;
    if (lobby) {
      const list = $("lobby-players");
      list.replaceChildren(...state.players.map((p) => el("li", null, p.name)));
      const start = $("start");
      start.hidden = !state.can_start;
      start.textContent = t.start;
    }
    const result = state.result;
    $("result").hidden = !result || state.phase !== "finished";
    if (result && state.phase === "finished") {
      $("result-title").textContent = result.title;
      $("result-lines").replaceChildren(...result.lines.map((line) => el("li", null, line)));
      $("rematch").textContent = result.rematch;
    }

    const bout = state.last_bout;
    $("last-bout-box").hidden = !bout;
    if (bout) {
      $("last-bout-title").textContent = t.last_bout;
      const row = $("last-bout");
      row.replaceChildren();
      for (const [attack, cover] of bout.pairs) {
        const mini = el("span", "mini");
        mini.appendChild(cardNode(attack, "small"));
        if (cover) mini.appendChild(cardNode(cover, "small"));
        row.appendChild(mini);
      }
      $("last-bout-outcome").textContent = bout.outcome || "";
    }
    $("log-title").textContent = t.log;
    // Newest first: the latest move is what a player looks for.
    $("log").replaceChildren(...state.log.slice().reverse().map((line) => el("li", null, line)));
    tick();
    backButton();
    document.body.dataset.ready = "1";
  }

  function tick() {
    const clock = $("clock");
    if (!state || !state.deadline) { clock.hidden = true; return; }
    const serverNow = (state.now || receivedAt) + (Date.now() / 1000 - receivedAt);
    const left = Math.max(0, Math.ceil(state.deadline - serverNow));
    clock.hidden = false;
    clock.textContent = left + " s";
    clock.classList.toggle("low", left <= 10);
  }

  function banner(text) {
    const node = $("banner");
    node.hidden = !text;
    node.textContent = text || "";
  }

  function toast(text) {
    const node = $("toast");
    node.textContent = text;
    node.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { node.hidden = true; }, 3000);
  }

  // --- start ---------------------------------------------------------------------------
  applyTheme();
  if (tg) {
    tg.ready();
    if (tg.expand) tg.expand();
    if (tg.onEvent) tg.onEvent("themeChanged", applyTheme);
    // Back from minimised: a new stream, so the server counts the app as open again
    // (after "Play here" in the chat the old stream no longer collapses the hand).
    if (tg.onEvent) tg.onEvent("activated", () => { if (game) connect(); });
    if (tg.BackButton && tg.BackButton.onClick) {
      tg.BackButton.onClick(() => { chosenAttack = chosenCard = null; selected = []; render(); });
    }
  }
  $("rematch").addEventListener("click", () => post("api/rematch"));
  $("start").addEventListener("click", () => post("api/start"));
  setInterval(tick, 500);
  connect();
})();
