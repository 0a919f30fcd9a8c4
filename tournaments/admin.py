"""Staff make arenas here too (or by ``POST /api/tournaments/``)."""

from django.contrib import admin

from .models import Arena, Entry, Pairing


@admin.register(Arena)
class ArenaAdmin(admin.ModelAdmin):
    list_display = ("name", "starts_at", "minutes", "rated", "origin", "finished")
    list_filter = ("rated", "origin", "finished")
    fields = ("name", "starts_at", "minutes", "rated")


@admin.register(Entry)
class EntryAdmin(admin.ModelAdmin):
    list_display = ("arena", "user", "points", "streak", "played", "state", "final_rank")
    list_filter = ("state",)
    raw_id_fields = ("arena", "user", "current_match", "last_opponent")


@admin.register(Pairing)
class PairingAdmin(admin.ModelAdmin):
    list_display = ("arena", "match", "user0", "user1", "settled", "counted", "points")
    raw_id_fields = ("arena", "match", "user0", "user1")
