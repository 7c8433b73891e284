// Mock-interview clock. The server keeps the step's clock (start, pauses, +1 min) and
// renders the seconds really left; this only counts them down on screen, shows overtime
// as "+m:ss", announces thresholds to screen readers and hides the clock on request.
// Pause, resume and +1 min are form buttons, so they work without this script.
(function () {
  "use strict";
  const timer = document.getElementById("timer");
  if (!timer) return;
  const clock = timer.querySelector(".timer-clock");
  const state = timer.querySelector(".timer-state");
  const announce = document.getElementById("timer-announce");
  const messages = {};
  const template = document.getElementById("timer-messages");
  if (template) {
    template.content.querySelectorAll("[data-key]").forEach(function (el) {
      messages[el.dataset.key] = el.textContent;
    });
  }
  const limit = parseInt(timer.dataset.limit, 10) * 1000;
  const startRemaining = parseInt(timer.dataset.remaining, 10) * 1000;
  const loaded = Date.now();
  const said = {};
  const hide = timer.querySelector("[data-action=hide]");

  function say(key) {
    if (said[key] || !messages[key]) return;
    said[key] = true;
    announce.textContent = messages[key];
  }

  function format(ms) {
    const seconds = Math.floor(Math.abs(ms) / 1000);
    return (ms < 0 ? "+" : "") + Math.floor(seconds / 60) + ":" +
      String(seconds % 60).padStart(2, "0");
  }

  function tick() {
    const remaining = startRemaining - (Date.now() - loaded);
    clock.textContent = format(remaining > -1000 && remaining < 0 ? 0 : remaining);
    const over = remaining <= 0;
    timer.classList.toggle("over", over);
    if (state && messages[over ? "over-time" : "left"]) {
      state.textContent = messages[over ? "over-time" : "left"];
    }
    if (remaining <= limit / 2) say("half");
    if (remaining <= 60000 && limit > 120000) say("minute");
    if (over) say("over");
  }

  if (hide) {
    hide.hidden = false;
    hide.addEventListener("click", function () {
      const hidden = clock.classList.toggle("visually-hidden");
      if (!hide.dataset.labelHide) hide.dataset.labelHide = hide.textContent;
      hide.textContent = hidden ? hide.dataset.labelShow : hide.dataset.labelHide;
      hide.setAttribute("aria-pressed", String(hidden));
    });
  }
  if (timer.dataset.paused === "yes") return;  // a stopped clock does not move
  tick();
  setInterval(tick, 250);
})();
