// The console's only script: refreshes live parts of a page, and asks before destructive
// forms are sent. No framework, nothing loaded from elsewhere.
"use strict";

// A refresh that has not answered in this many ticks is given up, so one hung request never
// stops the page's refreshes.
const GIVE_UP_TICKS = 5;

function refresh(element) {
  const every = Number(element.dataset.everyMs || 3000);
  const tick = async () => {
    const abort = new AbortController();
    const timer = window.setTimeout(() => abort.abort(), every * GIVE_UP_TICKS);
    try {
      const response = await fetch(element.dataset.refresh, {
        credentials: "same-origin",
        headers: { Accept: "text/html" },
        signal: abort.signal,
      });
      if (response.redirected || response.status === 303) {
        window.location.assign("/admin/login");
        return;
      }
      if (response.ok) {
        element.innerHTML = await response.text();
        element.dataset.refreshedAt = String(Date.now());
        delete element.dataset.refreshError;
      } else {
        // Shown above the figures (console.css) until a refresh succeeds again.
        element.dataset.refreshError = `HTTP ${response.status}`;
      }
    } catch (error) {
      // The API restarting, or no answer in time: try again at the next tick.
      element.dataset.refreshError = error.name === "AbortError" ? "no answer" : "unreachable";
    } finally {
      window.clearTimeout(timer);
    }
    window.setTimeout(tick, every);
  };
  window.setTimeout(tick, every);
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("[data-refresh]").forEach(refresh);
  document.querySelectorAll("form[data-confirm]").forEach((form) => {
    form.addEventListener("submit", (event) => {
      if (!window.confirm(form.dataset.confirm)) {
        event.preventDefault();
      }
    });
  });
  document.querySelectorAll("button[data-confirm]").forEach((button) => {
    button.addEventListener("click", (event) => {
      if (!window.confirm(button.dataset.confirm)) {
        event.preventDefault();
      }
    });
  });
  document.querySelectorAll("input[data-select-all]").forEach((box) => {
    box.addEventListener("change", () => {
      document.querySelectorAll(`input[name="${box.dataset.selectAll}"]`).forEach((other) => {
        other.checked = box.checked;
      });
    });
  });
});
