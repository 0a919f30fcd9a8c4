"""The computer players' accounts (levels 1-3), found by their level (accounts.reserved).

Until now ``matches.computer`` made ``computer-<level>`` on first use, looked up
by username, so a person who signed up that name first became "the computer".
Here each level gets its account: an existing computer account (found by its
level) keeps its name and is made sure to be a bot with an unusable password; a
missing one is made, under another name if a person holds ``computer-<level>``.
"""

from django.contrib.auth.hashers import make_password
from django.db import migrations, models

LEVELS = (1, 2, 3)


def make_accounts(apps, schema_editor):
    from accounts.reserved import make_computer_account

    User = apps.get_model("accounts", "User")
    for level in LEVELS:
        existing = list(User.objects.filter(computer_level=level).order_by("pk"))
        for extra in existing[1:]:  # never happened, but the constraint below needs it
            extra.computer_level = None
            extra.save(update_fields=["computer_level"])
        if existing:
            User.objects.filter(pk=existing[0].pk).update(
                is_bot=True, password=make_password(None), is_staff=False, is_superuser=False
            )
        else:
            make_computer_account(User, level)


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0004_bot_tokens"),
    ]

    operations = [
        migrations.RunPython(make_accounts, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="user",
            constraint=models.UniqueConstraint(
                condition=models.Q(("computer_level__isnull", False)),
                fields=("computer_level",),
                name="one_account_per_computer_level",
            ),
        ),
    ]
