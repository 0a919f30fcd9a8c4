"""What ``matches.play`` announces after a commit; the modules above it listen.

``matches.play`` is the bottom of ``matches/``: it never imports the modules
that push to sockets or keep the ranked queue. Instead it sends these signals from
``transaction.on_commit`` hooks, and those modules connect their receivers in
``MatchesConfig.ready`` (``matches/apps.py``).

- :data:`match_changed` — ``change``: a :class:`matches.play.audience.Change`, the
  match's new version with one ready-made state frame per audience. Sent only
  after the change is committed (a move is never seen before it is durable).
- :data:`match_starting` — ``match``, ``state``: sent inside the transaction
  in which both pressed 開始, with the first engine state; a receiver may
  return a replacement state (the arena's berserk halves a seat's main time
  before any clock runs, ``tournaments``).
- :data:`match_called_off` — ``match``: sent inside the transaction that aborts a
  match before its first decision (an invite's link opens again, ``lobby.invite_wait``).
- :data:`invite_accepted` — ``invite``, ``match``: sent inside the transaction that
  accepts an invite (its creator may be away: ``social`` tells them).
- :data:`queue_left` — ``user_ids``: players taken out of the ranked queue
  because they now have a match (their lobby pages must be told).
- :data:`ranked_paired` — ``match_id``, ``user_ids``: the queue paired two
  players (after the commit; ``social`` notifies them).
- :data:`lobby_seen` — ``user_id``, ``event`` (``connect``, ``tick`` every 10 s,
  ``disconnect``): a lobby socket is open (sent from its database thread;
  ``social.presence`` keeps who is online).
"""

from django.dispatch import Signal

match_changed = Signal()
match_starting = Signal()
match_called_off = Signal()
invite_accepted = Signal()
queue_left = Signal()
lobby_seen = Signal()
ranked_paired = Signal()
