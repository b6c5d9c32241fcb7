"use strict";
// A local stand-in for Telegram's telegram-web-app.js, used only when the real one did
// not load (tests, the sandbox without network). Like the real script it reads the
// launch parameters from the URL fragment:
// tgWebAppData (the signed init data), tgWebAppThemeParams (JSON) and, our addition,
// tgWebAppColorScheme. Haptics and back-button use are recorded in window.__tgCalls.
(function () {
  if (window.Telegram && window.Telegram.WebApp) return; // the real one is here
  const fragment = new URLSearchParams(location.hash.slice(1));
  const initData = fragment.get("tgWebAppData") || "";
  let themeParams = {};
  try { themeParams = JSON.parse(fragment.get("tgWebAppThemeParams") || "{}"); } catch (e) { themeParams = {}; }
  const data = new URLSearchParams(initData);
  let user = null;
  try { user = JSON.parse(data.get("user") || "null"); } catch (e) { user = null; }
  const calls = (window.__tgCalls = []);
  const handlers = {};
  const root = document.documentElement;
  for (const key of Object.keys(themeParams)) {
    root.style.setProperty("--tg-theme-" + key.replace(/_/g, "-"), themeParams[key]);
  }
  root.style.setProperty("--tg-viewport-stable-height", window.innerHeight + "px");
  let backClick = null;
  window.Telegram = {
    WebApp: {
      initData: initData,
      initDataUnsafe: { user: user, start_param: data.get("start_param") || undefined },
      platform: "stand-in",
      version: "8.0",
      themeParams: themeParams,
      colorScheme: fragment.get("tgWebAppColorScheme") === "dark" ? "dark" : "light",
      ready() { calls.push("ready"); },
      expand() { calls.push("expand"); },
      close() { calls.push("close"); },
      onEvent(name, fn) { (handlers[name] = handlers[name] || []).push(fn); },
      offEvent(name, fn) { handlers[name] = (handlers[name] || []).filter((f) => f !== fn); },
      BackButton: {
        isVisible: false,
        show() { this.isVisible = true; calls.push("back:show"); },
        hide() { this.isVisible = false; },
        onClick(fn) { backClick = fn; },
        press() { if (backClick) backClick(); },
      },
      HapticFeedback: {
        impactOccurred(style) { calls.push("impact:" + style); },
        notificationOccurred(type) { calls.push("notification:" + type); },
        selectionChanged() { calls.push("selection"); },
      },
    },
  };
})();
