from django.apps import AppConfig


class MatchesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "matches"
    verbose_name = "Matches"

    def ready(self) -> None:
        # matches.play announces committed changes; these modules above it push them
        # (matches/signals.py explains why the arrows point this way).
        from matches.lobby import invite_wait
        from matches.lobby import matchmaking as queue
        from matches.realtime import broadcast, session_sockets

        from . import signals

        signals.match_changed.connect(broadcast.on_match_changed, dispatch_uid="broadcast")
        signals.queue_left.connect(queue.on_queue_left, dispatch_uid="queue-left")
        signals.match_called_off.connect(
            invite_wait.reopen_called_off_invite, dispatch_uid="invite-reopen"
        )
        session_sockets.connect_receivers()  # a session's end closes its sockets
