"""`awsview doctor`: what a backend can tell, panel by panel."""
