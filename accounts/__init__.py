"""People: the custom user model, sign-up, log-in and the public profile page."""
