from awsview.cli.main import main

raise SystemExit(main())
