// Temporary: lets the tree configure before this component has sources. Delete when it does.
