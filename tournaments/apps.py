from django.apps import AppConfig


class TournamentsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "tournaments"
    verbose_name = "Tournaments"

    def ready(self) -> None:
        # A match reaches its arena through matches' own signals (tournaments/hooks.py).
        from matches import signals

        from . import hooks, services

        signals.match_changed.connect(hooks.on_match_changed, dispatch_uid="arena-result")
        signals.match_starting.connect(services.apply_berserk, dispatch_uid="arena-berserk")
