"""Fan-in of component results: verdict, persistence, session deadlines."""
