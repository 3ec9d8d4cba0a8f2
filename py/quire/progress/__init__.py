"""Study progress from a log of small events, as plain data.

Everything here is pure Python and takes ``now`` (and the person's time zone)
explicitly, so tests and the browser clock decide the time:

- ``clock``: epoch milliseconds, time zones (a UTC offset or an IANA name), local days.
- ``events``: the event record and ``record`` / ``safe_record``, which never raise.
- ``sessions``: study sessions inferred from pauses between actions.
- ``dashboard``: today, this week, streaks, heatmap, quiz accuracy, cards, coverage.
- ``metrics`` / ``badges``: named counts over stored data and the achievements built on them
  (definitions live in ``quire/data/badges.json``).
"""
