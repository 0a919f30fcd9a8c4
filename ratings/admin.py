from django.contrib import admin

from .models import PlayerRating, RatingChange


@admin.register(PlayerRating)
class PlayerRatingAdmin(admin.ModelAdmin):
    list_display = ("user", "rating", "rated_matches", "updated_at")
    search_fields = ("user__username",)
    raw_id_fields = ("user",)
    # Written only by ratings.services inside the transaction that ends a match.
    readonly_fields = ("rating", "rated_matches", "updated_at")


@admin.register(RatingChange)
class RatingChangeAdmin(admin.ModelAdmin):
    list_display = ("id", "player", "match", "before", "after", "change", "k", "created_at")
    search_fields = ("player__username",)
    raw_id_fields = ("player", "match")
    readonly_fields = ("before", "after", "change", "k", "created_at")
