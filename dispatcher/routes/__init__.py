"""The API's routes, one router per concern: sessions (submit), progress, review, health."""
