"""REST and WebSocket API of the patience service."""
