"""Full screens of the app and the controllers that belong to one (the dashboard's launch control)."""
