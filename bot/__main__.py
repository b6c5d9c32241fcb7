from bot.main import main

main()
