"""What each message shows and keeping it so: the outbox."""
