print("keyservice-mock")
