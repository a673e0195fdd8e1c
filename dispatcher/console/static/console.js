// The console's only script: refreshes live parts of a page, and asks before destructive
// forms are sent. No framework, nothing loaded from elsewhere.
"use strict";

function refresh(element) {
  const every = Number(element.dataset.everyMs || 3000);
  const tick = async () => {
    try {
      const response = await fetch(element.dataset.refresh, {
        credentials: "same-origin",
        headers: { Accept: "text/html" },
      });
      if (response.redirected || response.status === 303) {
        window.location.assign("/admin/login");
        return;
      }
      if (response.ok) {
        element.innerHTML = await response.text();
        element.dataset.refreshedAt = String(Date.now());
      }
    } catch (error) {
      // The API restarting: try again at the next tick.
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
