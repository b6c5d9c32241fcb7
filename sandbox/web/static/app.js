// Durak sandbox page: renders the group chat and this tab's private chat with the bot from
// the server's event stream, and acts as this tab's Telegram user. No framework, no build.
"use strict";

(() => {
  const STORAGE_KEY = "durak-sandbox-user";
  const PRESS_TIMEOUT_MS = 15000; // Telegram's client gives up on an unanswered button too
  const TOAST_MS = 2600;
  const CHATS = ["group", "private"];

  const state = {
    me: null,
    bot: null,
    group: null,
    started: false,
    messages: { group: new Map(), private: new Map() },
    pending: new Map(), // callback_query_id -> {button, timer}
    answered: new Set(), // recent callback_query_ids the bot has answered
    commands: { group: null, private: null },
    source: null,
    topic: 1, // the forum topic shown in the group pane (1: General)
    online: true,
  };

  const $ = (selector, root = document) => root.querySelector(selector);
  const pane = (chat) => $(`#pane-${chat}`);
  const list = (chat) => $(`#messages-${chat}`);

  // ------------------------------------------------------------------ server calls

  async function api(path, body) {
    const options = body === undefined ? {} : {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    };
    let response;
    try {
      response = await fetch(path, options);
    } catch (err) {
      throw new Error("The sandbox is not reachable.");
    }
    const data = await response.json().catch(() => ({ ok: false, error: response.statusText }));
    if (!data.ok) {
      const error = new Error(data.error || "request failed");
      error.status = response.status;
      throw error;
    }
    return data.result;
  }

  // ------------------------------------------------------------------ sanitising

  // The server sends the emulator's safe rendering; this allow-list walk is a second line
  // of defence so nothing but Telegram's formatting can ever reach the document.
  const ALLOWED = {
    B: [], I: [], U: [], S: [], CODE: [], PRE: [], BLOCKQUOTE: ["class"], SPAN: ["class"],
    A: ["href"],
  };

  function sanitize(html) {
    const template = document.createElement("template");
    template.innerHTML = html; // inert: nothing in a template runs or loads
    clean(template.content);
    return template.content;
  }

  function clean(root) {
    for (const el of Array.from(root.children)) {
      const allowed = ALLOWED[el.tagName];
      if (!allowed) {
        el.replaceWith(document.createTextNode(el.textContent));
        continue;
      }
      for (const attr of Array.from(el.attributes)) {
        if (!allowed.includes(attr.name)) el.removeAttribute(attr.name);
      }
      if (el.tagName === "A" && !/^(https?:|tg:)/i.test(el.getAttribute("href") || "")) {
        el.removeAttribute("href");
      }
      clean(el);
    }
  }

  // ------------------------------------------------------------------ rendering

  const NAME_COLORS = ["#e17076", "#faa774", "#a695e7", "#7bc862", "#6ec9cb", "#65aadd", "#ee7aae"];

  function initials(name) {
    const parts = String(name || "?").trim().split(/\s+/);
    return (parts[0][0] + (parts.length > 1 ? parts[1][0] : "")).toUpperCase();
  }

  function colorFor(id) {
    return NAME_COLORS[Math.abs(Number(id) || 0) % NAME_COLORS.length];
  }

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function timeOf(unix) {
    if (!unix) return "";
    const d = new Date(unix * 1000);
    return `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;
  }

  function threadOf(msg) {
    return msg.thread || 1; // 0 = General
  }

  function renderService(msg) {
    const root = el("div", "msg service");
    root.dataset.id = msg.key;
    root.dataset.version = msg.version;
    root.dataset.thread = threadOf(msg);
    root.append(el("span", "service-text", msg.service));
    return root;
  }

  function renderMessage(chat, msg) {
    if (msg.service) return renderService(msg);
    const root = el("div", "msg" + (msg.own ? " own" : "") + (msg.ephemeral ? " ephemeral" : ""));
    root.dataset.id = msg.key;
    root.dataset.version = msg.version;
    root.dataset.thread = threadOf(msg);
    root.dataset.from = msg.from.is_bot ? "bot" : msg.own ? "me" : "user";
    const showSender = chat === "group" && !msg.own;
    if (showSender) {
      const avatar = el("span", "avatar", msg.from.is_bot ? "🃏" : initials(msg.from.name));
      if (msg.from.is_bot) avatar.classList.add("bot");
      else avatar.style.background = colorFor(msg.from.id);
      root.append(avatar);
    }
    const body = el("div", "msg-body");
    const bubble = el("div", "bubble");
    if (showSender) {
      const sender = el("div", "sender", msg.from.name);
      sender.style.color = msg.from.is_bot ? "#e8843d" : colorFor(msg.from.id);
      bubble.append(sender);
    }
    const replied = msg.reply_to != null ? state.messages[chat].get(String(msg.reply_to)) : null;
    if (replied) {
      const quote = el("div", "reply");
      quote.append(el("b", "", replied.from.name), replied.text.split("\n")[0]);
      bubble.append(quote);
    }
    const text = el("div", "text");
    if (msg.html) text.append(sanitize(msg.html));
    else text.append(el("span", "unsupported", "(a message the sandbox cannot show)"));
    const meta = el("span", "meta", (msg.edited ? "edited " : "") + timeOf(msg.date));
    text.append(meta);
    bubble.append(text);
    if (msg.ephemeral) {
      // As Telegram marks them: nobody else in the group sees this message.
      const note = el("div", "ephemeral-note");
      note.append(el("span", "", "👁 Only you can see this"));
      const dismiss = el("button", "link-button dismiss", "Dismiss");
      dismiss.type = "button";
      dismiss.title = "Drop it from this app (as an app may, e.g. on a restart)";
      dismiss.addEventListener("click", () => dismissEphemeral(msg));
      note.append(dismiss);
      bubble.append(note);
    }
    body.append(bubble);
    if (msg.buttons.length) body.append(renderKeyboard(chat, msg));
    root.append(body);
    return root;
  }

  function renderKeyboard(chat, msg) {
    const keyboard = el("div", "keyboard");
    for (const row of msg.buttons) {
      const line = el("div", "kb-row");
      for (const button of row) {
        const b = el("button", "kb", button.text);
        b.type = "button";
        b.title = button.text;
        if (button.kind === "callback") {
          b.dataset.callback = button.data;
          b.addEventListener("click", () => press(chat, msg, button.data, b));
        } else if (button.kind === "url") {
          b.classList.add("url");
          b.dataset.url = button.url;
          b.addEventListener("click", () => openLink(button.url));
        } else if (button.kind === "web_app") {
          b.classList.add("web-app");
          b.dataset.webApp = button.url;
          b.addEventListener("click", () => openMiniApp(button.url));
        } else {
          b.disabled = true;
          b.title = "This kind of button is not available in the sandbox";
        }
        line.append(b);
      }
      keyboard.append(line);
    }
    return keyboard;
  }

  function nearBottom(container) {
    return container.scrollHeight - container.scrollTop - container.clientHeight < 80;
  }

  function upsert(chat, msg) {
    const container = list(chat);
    const stick = nearBottom(container);
    const known = state.messages[chat].get(msg.key);
    if (known && known.version > msg.version) return; // never go back to an older edit
    state.messages[chat].set(msg.key, msg);
    const node = renderMessage(chat, msg);
    node.dataset.order = msg.order;
    if (chat === "group") node.hidden = !inShownTopic(msg);
    if (msg.replaces != null) {
      // replace_callback_query_message: shown in place of the message that was tapped.
      const original = container.querySelector(`.msg[data-id="${msg.replaces}"]`);
      if (original) original.hidden = true;
    }
    const old = container.querySelector(`.msg[data-id="${msg.key}"]`);
    if (old) {
      old.replaceWith(node);
    } else {
      const later = Array.from(container.querySelectorAll(".msg")).find(
        (m) => Number(m.dataset.order) > msg.order,
      );
      container.insertBefore(node, later || null);
    }
    if (chat === "private" && msg.own) setStarted(true);
    if (!msg.own) markUnread(chat);
    if (stick || (msg.own && !old)) container.scrollTop = container.scrollHeight;
  }

  // On narrow screens one chat is hidden behind a tab: flag news there.
  const narrow = window.matchMedia("(max-width: 820px)");
  let rendering = false;

  function markUnread(chat) {
    if (rendering || !narrow.matches || $("#chats").dataset.show === chat) return;
    $(`#tabs button[data-show="${chat}"]`).classList.add("unread");
  }

  function remove(chat, key) {
    state.messages[chat].delete(String(key));
    const node = list(chat).querySelector(`.msg[data-id="${key}"]`);
    if (node) node.remove();
  }

  // ------------------------------------------------------------------ forum topics

  function isForum() {
    return Boolean(state.group && state.group.forum);
  }

  function inShownTopic(msg) {
    return !isForum() || threadOf(msg) === state.topic;
  }

  function amAdmin() {
    if (!state.group || !state.me) return false;
    const me = state.group.members.find((m) => m.id === state.me.id);
    return Boolean(me && me.creator);
  }

  function currentTopic() {
    if (!state.group) return null;
    return (state.group.topics || []).find((t) => t.message_thread_id === state.topic) || null;
  }

  function renderTopics() {
    const bar = $("#topic-bar");
    $("#forum-toggle").hidden = !amAdmin();
    $("#forum-toggle").textContent = isForum() ? "Topics: on" : "Topics: off";
    bar.hidden = !isForum();
    if (!isForum()) {
      state.topic = 1;
    } else if (!currentTopic()) {
      state.topic = 1; // the topic shown was deleted
    }
    const tabs = $("#topic-tabs");
    tabs.replaceChildren();
    for (const topic of (isForum() && state.group.topics) || []) {
      const b = el("button", "topic" + (topic.message_thread_id === state.topic ? " active" : ""));
      b.type = "button";
      b.dataset.thread = topic.message_thread_id;
      const dot = el("span", "topic-dot");
      dot.style.background = `#${Number(topic.icon_color || 7322096).toString(16).padStart(6, "0")}`;
      b.append(dot, el("span", "", (topic.closed ? "🔒 " : "") + topic.name));
      b.addEventListener("click", () => showTopic(topic.message_thread_id));
      tabs.append(b);
    }
    const topic = currentTopic();
    $("#topic-tools").hidden = !amAdmin();
    $("#topic-close").textContent = topic && topic.closed ? "🔓" : "🔒";
    $("#topic-delete").hidden = !topic || topic.message_thread_id === 1;
    const closed = topic && topic.closed && !amAdmin();
    const input = $("#pane-group .composer input");
    input.disabled = Boolean(closed);
    input.placeholder = closed ? "The topic is closed" : isForum() && topic ? `Message in ${topic.name}…` : "Write a message…";
    for (const node of list("group").querySelectorAll(".msg")) {
      const msg = state.messages.group.get(node.dataset.id);
      if (msg) node.hidden = !inShownTopic(msg);
    }
  }

  function showTopic(thread) {
    state.topic = thread;
    renderTopics();
    list("group").scrollTop = list("group").scrollHeight;
  }

  async function topicAction(action, extra = {}) {
    try {
      const result = await api("/_sandbox/topics", { user_id: state.me.id, action, ...extra });
      if (result && result.thread) state.topic = result.thread;
    } catch (err) {
      toast("group", err.message, "error");
    }
  }

  async function dismissEphemeral(msg) {
    try {
      await api("/_sandbox/dismiss", { user_id: state.me.id, ephemeral_id: msg.ephemeral_id });
    } catch (err) {
      toast("group", err.message, "error");
    }
  }

  function renderPresence(online) {
    state.online = online;
    const b = $("#presence");
    b.textContent = online ? "online" : "offline";
    b.classList.toggle("offline", !online);
  }

  function renderAll(chat, messages) {
    state.messages[chat].clear();
    list(chat).querySelectorAll(".msg").forEach((m) => m.remove());
    rendering = true;
    for (const msg of messages) upsert(chat, msg);
    rendering = false;
    list(chat).scrollTop = list(chat).scrollHeight;
  }

  function renderGroup(group) {
    state.group = group;
    $("#group-title").textContent = group.title;
    $("#group-avatar").textContent = initials(group.title);
    const people = group.members.length + 1; // + the bot
    $("#group-sub").textContent = `${people} members: ${group.members.map((m) => m.name).join(", ")}, ${state.bot ? state.bot.name : "bot"}`;
  }

  function renderBotStatus(status) {
    const box = $("#bot-status");
    box.dataset.state = status.state;
    const labels = {
      starting: "bot starting…",
      running: "bot running",
      offline: "sandbox not reachable — reconnecting…",
      exited: `bot process stopped (${status.reason || status.code}) — see the console`,
    };
    $(".label", box).textContent = labels[status.state] || status.state;
  }

  function setStarted(started) {
    state.started = started;
    $("#start-button").hidden = started;
    $("#pane-private .composer").hidden = !started;
  }

  // ------------------------------------------------------------------ toasts, alerts, focus

  function toast(chat, text, kind = "") {
    const area = $(".toasts", pane(chat));
    const node = el("div", "toast" + (kind ? ` ${kind}` : ""), text);
    area.append(node);
    setTimeout(() => {
      node.classList.add("leaving");
      setTimeout(() => node.remove(), 350);
    }, TOAST_MS);
  }

  function alertBox(text) {
    $("#alert-from").textContent = state.bot ? state.bot.name : "Bot";
    $("#alert-text").textContent = text;
    $("#alert").hidden = false;
    $("#alert-ok").focus();
  }

  function showChat(chat) {
    const chats = $("#chats");
    chats.dataset.show = chat;
    for (const b of document.querySelectorAll("#tabs button")) {
      b.classList.toggle("active", b.dataset.show === chat);
      if (b.dataset.show === chat) b.classList.remove("unread");
    }
    const p = pane(chat);
    p.classList.add("flash");
    setTimeout(() => p.classList.remove("flash"), 900);
  }

  // ------------------------------------------------------------------ actions

  async function press(chat, msg, data, button) {
    if (button.classList.contains("pending")) return;
    button.classList.add("pending");
    try {
      const where = msg.ephemeral ? { ephemeral_id: msg.ephemeral_id } : { message_id: msg.id };
      const result = await api("/_sandbox/press", { user_id: state.me.id, chat, data, ...where });
      const id = result.callback_query_id;
      // The answer can arrive on the event stream before this response does.
      if (state.answered.has(id)) {
        button.classList.remove("pending");
        return;
      }
      state.pending.set(id, { button, timer: setTimeout(() => settle(id), PRESS_TIMEOUT_MS) });
    } catch (err) {
      button.classList.remove("pending");
      toast(chat, err.message, "error");
    }
  }

  function settle(queryId) {
    const entry = state.pending.get(queryId);
    if (!entry) return;
    clearTimeout(entry.timer);
    entry.button.classList.remove("pending");
    state.pending.delete(queryId);
  }

  function onAnswer(answer) {
    state.answered.add(answer.callback_query_id);
    if (state.answered.size > 200) state.answered.delete(state.answered.values().next().value);
    settle(answer.callback_query_id);
    if (answer.text) {
      if (answer.show_alert) alertBox(answer.text);
      else toast(answer.chat, answer.text);
    }
    if (answer.url) openLink(answer.url);
  }

  // A web_app button: the bot's Mini App in a phone-sized window, with init data the
  // sandbox signs for this tab's user exactly as Telegram would.
  async function openMiniApp(url) {
    try {
      const result = await api("/_sandbox/webapp", { user_id: state.me.id, url });
      const name = "durak-mini-app-" + state.me.id;
      window.open(result.url, name, "popup,width=400,height=780");
    } catch (err) {
      toast("private", err.message, "error");
    }
  }

  async function openLink(url) {
    try {
      const result = await api("/_sandbox/open", { user_id: state.me.id, url });
      if (result.action === "external") {
        if (window.confirm(`Open this link in a new tab?\n\n${result.url}`)) {
          window.open(result.url, "_blank", "noopener,noreferrer");
        }
        return;
      }
      showChat("private");
      if (result.action === "show_start") {
        const start = $("#start-button");
        start.dataset.payload = result.payload || ""; // what START sends, as the app keeps it
        start.classList.add("flash");
        setTimeout(() => start.classList.remove("flash"), 900);
        start.focus();
      }
    } catch (err) {
      toast("private", err.message, "error");
    }
  }

  async function send(chat, text) {
    const thread = chat === "group" && isForum() && state.topic !== 1 ? state.topic : undefined;
    await api("/_sandbox/send", { user_id: state.me.id, chat, text, thread });
  }

  // ------------------------------------------------------------------ composer & commands

  async function loadCommands(chat) {
    if (state.commands[chat] && state.commands[chat].length) return state.commands[chat];
    try {
      state.commands[chat] = await api(
        `/_sandbox/commands?user_id=${state.me.id}&chat=${chat}`,
      );
    } catch (err) {
      state.commands[chat] = [];
    }
    return state.commands[chat];
  }

  async function suggest(chat, form, showAll) {
    const box = $(".suggestions", form);
    const value = form.elements.text.value;
    if (!showAll && (!value.startsWith("/") || /\s/.test(value))) {
      box.hidden = true;
      return;
    }
    const prefix = showAll ? "" : value.slice(1).toLowerCase();
    const commands = (await loadCommands(chat)).filter((c) => c.command.startsWith(prefix));
    box.replaceChildren();
    for (const c of commands) {
      const item = el("li");
      item.append(el("span", "cmd", `/${c.command}`), el("span", "desc", c.description));
      item.addEventListener("mousedown", (event) => {
        event.preventDefault(); // keep focus in the input
        box.hidden = true;
        form.elements.text.value = "";
        send(chat, `/${c.command}`).catch((err) => toast(chat, err.message, "error"));
      });
      box.append(item);
    }
    box.hidden = commands.length === 0;
  }

  function setupComposer(chat) {
    const form = $(".composer", pane(chat));
    const input = form.elements.text;
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const text = input.value;
      if (!text.trim()) return;
      input.value = "";
      $(".suggestions", form).hidden = true;
      try {
        await send(chat, text);
      } catch (err) {
        input.value = text;
        toast(chat, err.message, "error");
      }
    });
    input.addEventListener("input", () => suggest(chat, form, false));
    input.addEventListener("blur", () => { $(".suggestions", form).hidden = true; });
    $(".menu-button", form).addEventListener("click", () => {
      const box = $(".suggestions", form);
      if (!box.hidden) {
        box.hidden = true;
        return;
      }
      input.focus();
      suggest(chat, form, true);
    });
  }

  // ------------------------------------------------------------------ live stream

  function connect() {
    if (state.source) state.source.close();
    const source = new EventSource(`/_sandbox/events?user_id=${state.me.id}`);
    state.source = source;
    const on = (name, handler) => source.addEventListener(name, (event) => {
      handler(JSON.parse(event.data));
    });
    on("snapshot", (snap) => {
      state.bot = snap.bot;
      state.me = snap.me;
      $("#bot-title").textContent = snap.bot.name;
      $("#private-sub").textContent = `bot · @${snap.bot.username}`;
      renderGroup(snap.group);
      renderBotStatus(snap.bot_status);
      setStarted(snap.started);
      renderPresence(snap.online !== false);
      for (const chat of CHATS) renderAll(chat, snap.messages[chat]);
      renderTopics();
      document.body.dataset.ready = "1";
    });
    on("message", (e) => upsert(e.chat, e.message));
    on("delete", (e) => remove(e.chat, e.key != null ? e.key : e.id));
    on("answer", onAnswer);
    on("members", (group) => { renderGroup(group); renderTopics(); });
    on("topics", (group) => { renderGroup(group); renderTopics(); });
    on("bot", renderBotStatus);
    on("typing", (e) => typing(e.chat));
    source.onerror = async () => {
      if (source.readyState !== EventSource.CLOSED) {
        renderBotStatus({ state: "offline" }); // EventSource retries by itself
        return;
      }
      // Closed for good: the server refused this user, e.g. the sandbox was restarted.
      try {
        const info = await api("/_sandbox/info");
        if (!info.group.members.some((m) => m.id === state.me.id)) {
          forget("The sandbox was restarted — join again.");
          return;
        }
      } catch (err) {
        renderBotStatus({ state: "offline" });
      }
      setTimeout(connect, 2000);
    };
  }

  const typingTimers = {};
  function typing(chat) {
    const sub = chat === "group" ? $("#group-sub") : $("#private-sub");
    const name = state.bot ? state.bot.name : "bot";
    if (!sub.dataset.normal) sub.dataset.normal = sub.textContent;
    sub.textContent = chat === "group" ? `${name} is typing…` : "typing…";
    sub.classList.add("typing");
    clearTimeout(typingTimers[chat]);
    typingTimers[chat] = setTimeout(() => {
      sub.textContent = sub.dataset.normal;
      delete sub.dataset.normal;
      sub.classList.remove("typing");
    }, 4000);
  }

  // ------------------------------------------------------------------ joining

  function enter(user) {
    state.me = user;
    sessionStorage.setItem(STORAGE_KEY, String(user.id));
    $("#join").hidden = true;
    $("#chats").hidden = false;
    $("#tabs").hidden = false;
    $("#me").hidden = false;
    $("#me-name").textContent = user.name;
    $("#me-lang").textContent = user.language;
    $("#me-avatar").textContent = initials(user.name);
    $("#me-avatar").style.background = colorFor(user.id);
    state.commands = { group: null, private: null };
    connect();
  }

  function forget(notice) {
    sessionStorage.removeItem(STORAGE_KEY);
    if (state.source) state.source.close();
    state.source = null;
    document.body.dataset.ready = "";
    showJoin(notice);
  }

  const SUGGESTED_NAMES = ["Ann", "Bob", "Carol", "Dmitri", "Eva", "Fatima", "Gus", "Hana"];

  async function showJoin(notice) {
    $("#chats").hidden = true;
    $("#tabs").hidden = true;
    $("#me").hidden = true;
    $("#join").hidden = false;
    $("#join-notice").hidden = !notice;
    $("#join-notice").textContent = notice || "";
    let info;
    try {
      info = await api("/_sandbox/info");
    } catch (err) {
      $("#join-notice").hidden = false;
      $("#join-notice").textContent = err.message;
      return;
    }
    renderBotStatus(info.bot_status);
    $("#join-group").textContent = info.group.title;
    const select = $("#join-language");
    if (!select.options.length) {
      const preferred = (navigator.language || "en").slice(0, 2);
      for (const lang of info.languages) {
        const option = el("option", "", `${lang.name} (${lang.code})`);
        option.value = lang.code;
        option.selected = lang.code === preferred;
        select.append(option);
      }
    }
    const taken = new Set(info.group.members.map((m) => m.name));
    const name = $("#join-name");
    name.value = SUGGESTED_NAMES.find((n) => !taken.has(n)) || "";
    const users = $("#join-users");
    users.replaceChildren();
    for (const member of info.group.members) {
      const b = el("button", "", `${member.name} (${member.language})`);
      b.type = "button";
      b.addEventListener("click", () => enter(member));
      users.append(b);
    }
    $("#join-existing").hidden = info.group.members.length === 0;
    name.focus();
    name.select();
  }

  async function restore() {
    const saved = Number(sessionStorage.getItem(STORAGE_KEY));
    if (!saved) return showJoin();
    try {
      const info = await api("/_sandbox/info");
      const user = info.group.members.find((m) => m.id === saved);
      if (user) return enter(user);
      return forget("The sandbox was restarted — join again.");
    } catch (err) {
      return showJoin(err.message);
    }
  }

  // ------------------------------------------------------------------ wiring

  function setup() {
    $("#join-form").addEventListener("submit", async (event) => {
      event.preventDefault();
      const form = event.target;
      try {
        const user = await api("/_sandbox/join", {
          name: form.elements.name.value,
          language: form.elements.language.value,
        });
        enter(user);
      } catch (err) {
        $("#join-notice").hidden = false;
        $("#join-notice").textContent = err.message;
      }
    });
    $("#switch-user").addEventListener("click", () => forget(""));
    $("#presence").addEventListener("click", async () => {
      try {
        const result = await api("/_sandbox/presence", { user_id: state.me.id, online: !state.online });
        renderPresence(result.online);
      } catch (err) {
        toast("group", err.message, "error");
      }
    });
    $("#forum-toggle").addEventListener("click", () => topicAction(isForum() ? "disable" : "enable"));
    $("#topic-new").addEventListener("click", () => {
      const name = window.prompt("Name of the new topic");
      if (name && name.trim()) topicAction("create", { name });
    });
    $("#topic-close").addEventListener("click", () => {
      const topic = currentTopic();
      if (topic) topicAction(topic.closed ? "reopen" : "close", { thread: topic.message_thread_id });
    });
    $("#topic-delete").addEventListener("click", () => {
      const topic = currentTopic();
      if (topic && window.confirm(`Delete the topic “${topic.name}” and all its messages?`)) {
        topicAction("delete", { thread: topic.message_thread_id });
      }
    });
    $("#alert-ok").addEventListener("click", () => { $("#alert").hidden = true; });
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape") $("#alert").hidden = true;
    });
    $("#start-button").addEventListener("click", () => {
      // The payload of the deep link that showed START, if one did.
      const payload = $("#start-button").dataset.payload;
      delete $("#start-button").dataset.payload;
      const text = payload ? `/start ${payload}` : "/start";
      send("private", text).catch((err) => toast("private", err.message, "error"));
    });
    for (const b of document.querySelectorAll("#tabs button")) {
      b.addEventListener("click", () => showChat(b.dataset.show));
    }
    for (const chat of CHATS) {
      setupComposer(chat);
      // Links inside messages go through the sandbox (t.me links open the bot's chat).
      list(chat).addEventListener("click", (event) => {
        const spoiler = event.target.closest(".tg-spoiler");
        if (spoiler) spoiler.classList.add("revealed");
        const link = event.target.closest("a[href]");
        if (link) {
          event.preventDefault();
          openLink(link.getAttribute("href"));
        }
      });
    }
    restore();
  }

  setup();
})();
