"""Pure view models: what a widget or screen shows, computed from state with no Textual, tested on fixed
inputs."""
