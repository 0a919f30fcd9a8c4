"""What an arena announces to the apps above it (``social`` tells the players).

- :data:`arena_started` — ``arena_id``, ``user_ids``: sent once, inside the transaction
  of the pass that first finds the arena running, for the players who joined before.
"""

from django.dispatch import Signal

arena_started = Signal()
