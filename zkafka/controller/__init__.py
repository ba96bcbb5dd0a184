"""The 0.8 line's controller: its context (the view of ZooKeeper), election, channel manager, request planning,
leader selection, reassignment and admin tasks."""
