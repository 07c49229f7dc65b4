package dev.fencekeeper.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaMethodCall;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.core.importer.Location;
import com.tngtech.archunit.lang.ArchRule;
import dev.fencekeeper.client.wire.Wire;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The promises of the layout in docs/design.md, checked on the production classes of every module
 * this module sees (the bench's tests depend, directly or not, on all the others but the
 * integrations, whose poms are checked instead).
 */
class ArchitectureTest {
  /**
   * Production classes only: test classes and the test-jar that shares TestCluster may reach
   * anywhere.
   */
  private static final ImportOption PRODUCTION_ONLY =
      new ImportOption() {
        private final ImportOption notTests = new ImportOption.DoNotIncludeTests();

        @Override
        public boolean includes(Location location) {
          return notTests.includes(location) && !location.contains("-tests.jar");
        }
      };

  static final JavaClasses CLASSES =
      new ClassFileImporter().withImportOption(PRODUCTION_ONLY).importPackages("dev.fencekeeper");

  static final String CORE = "dev.fencekeeper.core..";

  /**
   * The core is pure: every replica computes the same state from the same entries, and tests need
   * no cluster.
   */
  static final ArchRule CORE_IMPORTS_NO_RATIS_OR_PROTOBUF =
      noClasses()
          .that()
          .resideInAPackage(CORE)
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(
              "org.apache.ratis..",
              "com.google.protobuf..",
              "dev.fencekeeper.proto..",
              "dev.fencekeeper.statemachine..",
              "dev.fencekeeper.clientport..",
              "dev.fencekeeper.server..",
              "dev.fencekeeper.gateway..",
              "dev.fencekeeper.metrics..")
          .because(
              "the core is the pure, deterministic state; decoding and Ratis live in the adapter");

  static final ArchRule CORE_DOES_NO_IO =
      noClasses()
          .that()
          .resideInAPackage(CORE)
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(
              "java.io..", "java.nio.file..", "java.nio.channels..", "java.net..", "javax.net..")
          .because(
              "files (snapshots) and the network belong to the adapter; the core only holds state");

  static final ArchRule CORE_READS_NO_CLOCK =
      noClasses()
          .that()
          .resideInAPackage(CORE)
          .should()
          .callMethod(System.class, "currentTimeMillis")
          .orShould()
          .callMethod(System.class, "nanoTime")
          .orShould()
          .callMethodWhere(
              DescribedPredicate.describe(
                  "a now() of java.time",
                  (JavaMethodCall call) ->
                      call.getName().equals("now")
                          && call.getTargetOwner().getPackageName().equals("java.time")))
          .orShould()
          .dependOnClassesThat()
          .areAssignableTo(Clock.class)
          .orShould()
          .dependOnClassesThat()
          .areAssignableTo(InstantSource.class)
          .because(
              "time in the core is the leader's stamp in each entry, never a replica's own clock");

  /**
   * Every package, sub-packages on their own. One dependency is set aside: {@code
   * client.wire.Wire}, the internal bridge from the client's public types to their wire messages
   * for fencekeeper's own tools: it names those public types by design, and the client installs its
   * implementation.
   */
  static final ArchRule NO_PACKAGE_CYCLES =
      slices()
          .matching("dev.fencekeeper.(**)")
          .should()
          .beFreeOfCycles()
          .ignoreDependency(
              JavaClass.Predicates.belongToAnyOf(Wire.class), DescribedPredicate.alwaysTrue());

  /**
   * The metrics observe the state machine through the narrow hooks it calls ({@code
   * StateMachineMetrics}, {@code StateReader}); naming the adapter back would tie the two together.
   */
  static final ArchRule METRICS_DO_NOT_DEPEND_ON_THE_STATE_MACHINE =
      noClasses()
          .that()
          .resideInAPackage("dev.fencekeeper.metrics..")
          .should()
          .dependOnClassesThat()
          .resideInAPackage("dev.fencekeeper.statemachine..")
          .because("the state machine reports to the metrics, never the other way round");

  /** The module of each package; a module may use only the ones before it in the chain. */
  static final ArchRule MODULES_POINT_ONE_WAY =
      layeredArchitecture()
          .consideringOnlyDependenciesInLayers()
          .layer("cluster-config")
          .definedBy("dev.fencekeeper.config..")
          .layer("client")
          .definedBy("dev.fencekeeper.client..", "dev.fencekeeper.proto..")
          .layer("ratis-statemachine")
          .definedBy(
              "dev.fencekeeper.core..",
              "dev.fencekeeper.statemachine..",
              "dev.fencekeeper.clientport..",
              "dev.fencekeeper.server..",
              "dev.fencekeeper.replication..",
              "dev.fencekeeper.gateway..",
              "dev.fencekeeper.metrics..")
          .layer("cli")
          .definedBy("dev.fencekeeper.tools")
          .layer("drills")
          .definedBy("dev.fencekeeper.tools.drill..")
          .layer("bench")
          .definedBy("dev.fencekeeper.tools.bench..")
          .whereLayer("bench")
          .mayNotBeAccessedByAnyLayer()
          .whereLayer("drills")
          .mayNotBeAccessedByAnyLayer()
          .whereLayer("cli")
          .mayOnlyBeAccessedByLayers("drills", "bench")
          .whereLayer("ratis-statemachine")
          .mayOnlyBeAccessedByLayers("cli", "drills", "bench")
          .whereLayer("client")
          .mayOnlyBeAccessedByLayers("ratis-statemachine", "cli", "drills", "bench")
          .whereLayer("cluster-config")
          .mayOnlyBeAccessedByLayers("client", "ratis-statemachine", "cli", "drills", "bench");

  // Guarantee: the core names no Ratis, protobuf or adapter type.
  @Test
  void coreImportsNoRatisOrProtobuf() {
    CORE_IMPORTS_NO_RATIS_OR_PROTOBUF.check(CLASSES);
  }

  // Guarantee: the core touches no file, channel or socket.
  @Test
  void coreDoesNoIo() {
    CORE_DOES_NO_IO.check(CLASSES);
  }

  // Guarantee: the core reads no clock, wall or monotonic.
  @Test
  void coreReadsNoClock() {
    CORE_READS_NO_CLOCK.check(CLASSES);
  }

  // Guarantee: no two packages depend on each other, however indirectly.
  @Test
  void noPackageCycles() {
    NO_PACKAGE_CYCLES.check(CLASSES);
  }

  // Guarantee: the metrics name no class of the state machine's package.
  @Test
  void metricsDoNotDependOnTheStateMachine() {
    METRICS_DO_NOT_DEPEND_ON_THE_STATE_MACHINE.check(CLASSES);
  }

  // Guarantee: cluster-config <- client <- ratis-statemachine <- cli <- drills, bench, never
  // backwards, and the command line names neither the drills nor the bench.
  @Test
  void modulesPointOneWay() {
    MODULES_POINT_ONE_WAY.check(CLASSES);
  }

  // Guarantee: the rules above look at every module's classes, so none of them passes by seeing
  // nothing.
  @Test
  void everyModuleIsImported() {
    for (String pkg :
        List.of(
            "dev.fencekeeper.config",
            "dev.fencekeeper.client",
            "dev.fencekeeper.proto",
            "dev.fencekeeper.core",
            "dev.fencekeeper.statemachine",
            "dev.fencekeeper.clientport",
            "dev.fencekeeper.server",
            "dev.fencekeeper.replication",
            "dev.fencekeeper.metrics",
            "dev.fencekeeper.tools",
            "dev.fencekeeper.tools.drill",
            "dev.fencekeeper.tools.bench")) {
      assertThat(CLASSES.containPackage(pkg)).as("classes of %s imported", pkg).isTrue();
    }
  }

  // Guarantee: an integration module reaches the cluster through the client only: it depends on the
  // client and on other integrations (the Spring starter wires the JDBC fence and the ShedLock
  // provider), never on the server side (tests may start real nodes from the test-jar).
  @Test
  void integrationsDependOnTheClientOnly() throws IOException {
    assertThat(outsideClient(Path.of("..", "..", "integrations"))).isEmpty();
  }

  /**
   * The fencekeeper artifacts that hold the server side or the command line, not the client
   * library.
   */
  private static final Set<String> SERVER_SIDE =
      Set.of(
          "fencekeeper-ratis-statemachine",
          "fencekeeper-tools",
          "fencekeeper-cli",
          "fencekeeper-drills",
          "fencekeeper-bench",
          "fencekeeper-benchmarks",
          "fencekeeper-distribution");

  /**
   * The server-side fencekeeper artifacts that the poms under {@code integrations} depend on
   * outside test scope, as "module: artifact". Reads the poms because the integrations build after
   * tools, so their classes are not on this module's class path.
   */
  static List<String> outsideClient(Path integrations) throws IOException {
    List<String> found = new ArrayList<>();
    Pattern dependency = Pattern.compile("<dependency>(.*?)</dependency>", Pattern.DOTALL);
    Pattern fencekeeperArtifact =
        Pattern.compile("<groupId>dev\\.fencekeeper</groupId>\\s*<artifactId>([^<]+)</artifactId>");
    try (Stream<Path> poms = Files.walk(integrations)) {
      for (Path pom :
          poms.filter(p -> p.getFileName().toString().equals("pom.xml"))
              .filter(p -> !p.toString().contains("target"))
              .toList()) {
        Matcher d = dependency.matcher(Files.readString(pom));
        while (d.find()) {
          String body = d.group(1);
          Matcher artifact = fencekeeperArtifact.matcher(body);
          if (artifact.find()
              && SERVER_SIDE.contains(artifact.group(1))
              && !body.contains("<scope>test</scope>")) {
            found.add(integrations.relativize(pom.getParent()) + ": " + artifact.group(1));
          }
        }
      }
    }
    return found;
  }
}
