// Dates in the viewer's locale and time zone: every <time datetime> the server rendered in UTC is
// rewritten here (and again after htmx swaps a part of the page). Without script the UTC text stays.
(function () {
  var format = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  function localise(root) {
    var times = (root || document).querySelectorAll('time[datetime]');
    for (var i = 0; i < times.length; i++) {
      var d = new Date(times[i].getAttribute('datetime'));
      if (!isNaN(d.getTime())) {
        times[i].title = times[i].getAttribute('datetime');
        times[i].textContent = format.format(d);
      }
    }
  }
  document.addEventListener('DOMContentLoaded', function () { localise(document); });
  document.addEventListener('htmx:afterSettle', function (event) { localise(event.target); });
})();

// A form that changes something (every POST form) is sent once: a second click, or Enter, while
// its submission is on the way is ignored, so a double click cannot create two apps, zones or
// requests; its buttons are disabled so the person sees it is on the way. The buttons are disabled
// after the browser has read the form (a disabled button's name=value would not be sent), and
// enabled again when the browser brings the page back from its back-forward cache. GET forms (the
// log filters) are left alone. Without script a form still works; the server does not dedupe
// (docs/decisions.md, "Dashboard").
(function () {
  function buttons(form) {
    return form.querySelectorAll('button, input[type="submit"], input[type="image"]');
  }
  document.addEventListener('submit', function (event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement) || form.method !== 'post' || event.defaultPrevented) return;
    if (form.hasAttribute('data-submitting')) {
      event.preventDefault();
      return;
    }
    form.setAttribute('data-submitting', '');
    form.setAttribute('aria-busy', 'true');
    setTimeout(function () {
      var list = buttons(form);
      for (var i = 0; i < list.length; i++) {
        if (list[i].disabled) continue;
        list[i].disabled = true;
        list[i].setAttribute('data-disabled-while-submitting', '');
      }
    }, 0);
  });
  window.addEventListener('pageshow', function (event) {
    if (!event.persisted) return;
    var forms = document.querySelectorAll('form[data-submitting]');
    for (var i = 0; i < forms.length; i++) {
      forms[i].removeAttribute('data-submitting');
      forms[i].removeAttribute('aria-busy');
      var list = forms[i].querySelectorAll('[data-disabled-while-submitting]');
      for (var j = 0; j < list.length; j++) {
        list[j].disabled = false;
        list[j].removeAttribute('data-disabled-while-submitting');
      }
    }
  });
})();
