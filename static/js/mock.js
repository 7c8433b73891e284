// Mock-interview timer: visible countdown, screen-reader announcements only at thresholds,
// pause (the paused time is sent with the answer and not counted), +1 min, hide.
(function () {
  "use strict";
  const timer = document.getElementById("timer");
  if (!timer) return;
  const clock = timer.querySelector(".timer-clock");
  const announce = document.getElementById("timer-announce");
  const buttons = timer.querySelector(".timer-buttons");
  const pausedField = document.getElementById("paused-ms");
  const messages = {};
  const template = document.getElementById("timer-messages");
  if (template) {
    template.content.querySelectorAll("[data-key]").forEach(function (el) {
      messages[el.dataset.key] = el.textContent;
    });
  }
  timer.classList.add("js");
  buttons.hidden = false;

  let total = parseInt(timer.dataset.seconds, 10) * 1000;
  let remaining = total;
  let paused = false;
  let pausedMs = 0;
  let last = Date.now();
  const said = {};

  function say(key) {
    if (said[key] || !messages[key]) return;
    said[key] = true;
    announce.textContent = messages[key];
  }

  function render() {
    const seconds = Math.max(0, Math.ceil(remaining / 1000));
    const m = Math.floor(seconds / 60);
    const s = String(seconds % 60).padStart(2, "0");
    clock.textContent = m + ":" + s;
    timer.classList.toggle("over", remaining <= 0);
  }

  function tick() {
    const now = Date.now();
    const delta = now - last;
    last = now;
    if (paused) {
      pausedMs += delta;
      pausedField.value = String(Math.round(pausedMs));
    } else {
      remaining -= delta;
      if (remaining <= total / 2) say("half");
      if (remaining <= 60000 && total > 120000) say("minute");
      if (remaining <= 0) say("over");
    }
    render();
  }

  buttons.addEventListener("click", function (event) {
    const button = event.target.closest("button");
    if (!button) return;
    const action = button.dataset.action;
    if (action === "pause") {
      paused = !paused;
      if (!button.dataset.labelPause) button.dataset.labelPause = button.textContent;
      button.textContent = paused ? button.dataset.labelResume : button.dataset.labelPause;
      button.setAttribute("aria-pressed", String(paused));
    } else if (action === "extend") {
      remaining += 60000;
      total += 60000;
      said.over = false;
    } else if (action === "hide") {
      const hidden = clock.classList.toggle("visually-hidden");
      if (!button.dataset.labelHide) button.dataset.labelHide = button.textContent;
      button.textContent = hidden ? button.dataset.labelShow : button.dataset.labelHide;
      button.setAttribute("aria-pressed", String(hidden));
    }
    render();
  });

  render();
  setInterval(tick, 250);
})();
