"""One module per page of `tokreg serve`, each with its `routes`."""
