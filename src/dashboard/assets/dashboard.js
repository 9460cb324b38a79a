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
