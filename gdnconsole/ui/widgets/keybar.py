"""The key bar lives in ui/keybar.py, beside the screens and dialogs that show it (a dialog may not
import widgets: the log pane opens dialogs). Its old place still answers."""

from gdnconsole.ui.keybar import GAP, PINNED_ACTIONS, KeyBar, KeyItem, fit, key_items

__all__ = ["GAP", "PINNED_ACTIONS", "KeyBar", "KeyItem", "fit", "key_items"]
