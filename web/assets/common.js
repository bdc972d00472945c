// Shared by every page: reads the JSON a page embeds, and auto-submits filter forms.
"use strict";
window.perfgate = window.perfgate || {};
perfgate.data = function (id) {
  const el = document.getElementById(id);
  return el ? JSON.parse(el.textContent) : null;
};
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("form[data-autosubmit] select").forEach(function (sel) {
    sel.addEventListener("change", function () {
      // Empty filters are left out so shared URLs stay short.
      const form = sel.form;
      form.querySelectorAll("select").forEach(function (s) { s.disabled = s.value === ""; });
      form.submit();
    });
  });
});
