"""Settings, health, metrics, logging: the process around the bot."""
