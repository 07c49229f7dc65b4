package dev.fencekeeper.tools;

import dev.fencekeeper.config.CommonPool;
import dev.fencekeeper.config.ConfigException;
import java.io.PrintWriter;
import java.lang.reflect.Constructor;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.concurrent.Callable;
import org.slf4j.bridge.SLF4JBridgeHandler;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** The {@code fencekeeper} command line. */
@Command(
    name = "fencekeeper",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    sortOptions = false,
    description = {
      "A lock service whose locks cannot be outlived: leases carry fencing tokens, and the values"
          + " they protect reject writes with stale tokens.",
      "",
      "Client verbs take --endpoints HOST:PORT,... of the nodes' client ports (default:"
          + " $FENCEKEEPER_ENDPOINTS, else the cluster `up` starts) and --json (one JSON object on"
          + " stdout whose `status` is the result code)."
    })
public final class FencekeeperCli implements Callable<Integer> {
  /**
   * The built-in verbs, in the order help lists them. Not in the annotation: picocli would build
   * the model of every one of them by reflection before parsing, most of a client verb's start-up
   * after the JVM's own; {@link #commandLine(CliContext, String...)} builds the one asked for.
   */
  private static final List<Class<?>> VERBS =
      List.of(
          ServerCommand.class,
          UpCommand.class,
          LeaseCommand.class,
          WriteCommand.class,
          ReadCommand.class,
          StatusCommand.class,
          WatchCommand.class,
          MembersCommand.class,
          LeaderCommand.class,
          SnapshotCommand.class,
          ListingCommands.Leases.class,
          ListingCommands.Keys.class,
          InspectCommand.class,
          MetricsCommand.class,
          BackupCommand.class,
          RestoreCommand.class,
          CertsCommand.class,
          CompletionCommand.class,
          ClassArchiveTraining.class);

  @Spec private CommandSpec spec;

  /** Without a verb there is nothing to do but explain the verbs. */
  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getOut());
    return ExitCode.USAGE.code();
  }

  public static void main(String[] args) {
    CommonPool.atLeastTwoThreads(); // before anything creates a CompletableFuture
    // Route java.util.logging (Ratis' shaded gRPC) through Logback; neither call starts Logback
    // itself, which `server` relies on to choose its log level first.
    SLF4JBridgeHandler.removeHandlersForRootLogger();
    SLF4JBridgeHandler.install();
    System.exit(execute(CliContext.system(), args));
  }

  /**
   * Runs one command line against {@code context} and returns its exit code; never calls
   * System.exit.
   */
  public static int execute(CliContext context, String... args) {
    return commandLine(context, args).execute(args);
  }

  /** The command line with every verb, as help and completion show it. */
  static CommandLine commandLine(CliContext context) {
    return commandLine(context, VERBS, true);
  }

  /**
   * The command line to parse {@code args} with: when they start with the name of a built-in verb,
   * with that verb alone, since nothing else is looked at; otherwise (no verb, an option first, an
   * unknown verb, a verb from another module, {@code completion}) with every verb, so that help,
   * suggestions and errors see them all; {@code --version} alone with none. Either way a verb
   * parses, prints and exits as the same verb in the whole model does.
   */
  static CommandLine commandLine(CliContext context, String... args) {
    if (args.length == 1 && (args[0].equals("--version") || args[0].equals("-V"))) {
      // The version alone: no verb is looked at.
      return commandLine(context, List.of(), false);
    }
    Optional<Class<?>> verb = args.length == 0 ? Optional.empty() : builtInVerb(args[0]);
    return verb.isPresent()
        ? commandLine(context, List.of(verb.get()), false)
        : commandLine(context);
  }

  private static Optional<Class<?>> builtInVerb(String name) {
    for (Class<?> verb : VERBS) {
      Command command = verb.getAnnotation(Command.class);
      if (command.name().equals(name) || Arrays.asList(command.aliases()).contains(name)) {
        // Completion scripts list every verb, from the root of the model.
        return verb == CompletionCommand.class ? Optional.empty() : Optional.of(verb);
      }
    }
    return Optional.empty();
  }

  /** The command line with {@code verbs}, and those other modules add when {@code extraVerbs}. */
  private static CommandLine commandLine(
      CliContext context, List<Class<?>> verbs, boolean extraVerbs) {
    // Commands print through the outcome's streams, so that a bounded verb has one result.
    CallOutcome outcome = new CallOutcome(context);
    CommandLine cli = new CommandLine(new FencekeeperCli(), new ContextFactory(outcome.context()));
    // Before the settings below, which picocli applies to the subcommands present at the time.
    verbs.forEach(cli::addSubcommand);
    if (extraVerbs) {
      for (ExtraVerb verb :
          ServiceLoader.load(ExtraVerb.class, FencekeeperCli.class.getClassLoader())) {
        cli.addSubcommand(verb.command());
      }
    }
    cli.setOut(new PrintWriter(context.out(), true, StandardCharsets.UTF_8));
    cli.setErr(new PrintWriter(context.err(), true, StandardCharsets.UTF_8));
    cli.getCommandSpec()
        .usageMessage()
        .footerHeading("%nExit codes:%n")
        .footer(ExitCode.helpTable());
    // picocli would replace an argument "@path" by the lines of that file: `write r k @/etc/shadow`
    // would store the file. Values, names and owners are taken literally; files are read only where
    // an option says so (write --value-file).
    cli.setExpandAtFiles(false);
    cli.setParameterExceptionHandler(FencekeeperCli::usageError);
    cli.setExecutionStrategy(new CallDeadline(outcome)::execute);
    cli.setExitCodeExceptionMapper(
        e ->
            e instanceof ConfigException || e instanceof CommandLine.ParameterException
                ? ExitCode.USAGE.code()
                : ExitCode.UNEXPECTED.code());
    cli.setExecutionExceptionHandler(
        (e, commandLine, parseResult) -> {
          if (e instanceof ConfigException) {
            // The message already names the key (or flag) and the rejected value; a stack trace
            // would bury it.
            commandLine.getErr().println("fencekeeper: " + e.getMessage());
            return ExitCode.USAGE.code();
          }
          commandLine.getErr().println("fencekeeper: unexpected error: " + e);
          e.printStackTrace(commandLine.getErr());
          return ExitCode.UNEXPECTED.code();
        });
    return cli;
  }

  /**
   * A usage error: the one line that says what is wrong, a suggestion for a mistyped flag or verb,
   * and where to read more; the whole help would push the line that matters off the screen.
   */
  private static int usageError(CommandLine.ParameterException e, String[] args) {
    CommandLine command = e.getCommandLine();
    PrintWriter err = command.getErr();
    // picocli checks required options before it complains about unknown ones; a mistyped flag
    // (--tll 5s) is the mistake to name, not the --ttl it therefore did not see.
    List<String> unknown = command.getUnmatchedArguments();
    if (e instanceof CommandLine.MissingParameterException && !unknown.isEmpty()) {
      e = new CommandLine.UnmatchedArgumentException(command, unknown);
    }
    err.println("fencekeeper: " + e.getMessage());
    if (e instanceof CommandLine.UnmatchedArgumentException unmatched) {
      List<String> suggestions = unmatched.getSuggestions();
      if (!suggestions.isEmpty()) {
        err.println("Did you mean: " + String.join(", ", suggestions) + "?");
      }
    }
    err.println("See '" + command.getCommandSpec().qualifiedName() + " --help'.");
    err.flush();
    return ExitCode.USAGE.code();
  }

  /**
   * Creates commands and mixins, handing the {@link CliContext} to every class with a constructor
   * that takes one; everything else is built as picocli would.
   */
  private static final class ContextFactory implements CommandLine.IFactory {
    private final CliContext context;
    private final CommandLine.IFactory fallback = CommandLine.defaultFactory();

    ContextFactory(CliContext context) {
      this.context = context;
    }

    @Override
    public <K> K create(Class<K> type) throws Exception {
      try {
        Constructor<K> withContext = type.getDeclaredConstructor(CliContext.class);
        withContext.setAccessible(true);
        return withContext.newInstance(context);
      } catch (NoSuchMethodException e) {
        return fallback.create(type);
      }
    }
  }
}
