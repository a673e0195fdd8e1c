"""RabbitMQ objects as data, plus the I/O that declares, verifies and exports them."""
