from awsview.cli import main

raise SystemExit(main())
