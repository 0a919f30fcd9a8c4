from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.utils.translation import gettext_lazy as _

from .models import User

admin.site.register(User, UserAdmin)

admin.site.site_header = _("Spectacular Bid administration")
admin.site.site_title = _("Spectacular Bid admin")
admin.site.index_title = _("Site administration")
