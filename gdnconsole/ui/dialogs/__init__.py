"""Small modal dialogs (confirm, help, host key, save-as, the log's filter and search): they return a
value and import no screen or widget."""
