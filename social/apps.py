from django.apps import AppConfig


class SocialConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "social"
    verbose_name = "Social"

    def ready(self) -> None:
        # social sits on top of matches: matches never imports it, it listens
        # (the lobby socket's presence, new matches) and registers the queue's
        # keep-apart rule (blocks).
        from matches import signals
        from matches.lobby import matchmaking as queue
        from matches.realtime import periodic

        from . import blocks, notify, presence, turns

        signals.lobby_seen.connect(presence.on_lobby_seen, dispatch_uid="social-presence")
        if blocks.blocked_pairs not in queue.KEEP_APART:
            queue.KEEP_APART.append(blocks.blocked_pairs)
        notify.connect_match_found()
        notify.connect_arena_started()
        notify.connect_invite_accepted()
        if (turns.EVERY_S, turns.push_turns) not in periodic.EXTRA_JOBS:
            periodic.EXTRA_JOBS.append((turns.EVERY_S, turns.push_turns))
