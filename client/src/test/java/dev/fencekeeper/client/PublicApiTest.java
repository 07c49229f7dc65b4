package dev.fencekeeper.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.domain.JavaType;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The client's public API speaks fencekeeper's own types only: no generated protobuf class, no
 * protobuf runtime type, no Ratis type and no Dropwizard metrics type in any public or protected
 * signature of a public type of {@code dev.fencekeeper.client}, so an application never compiles
 * against them and their versions can change (or be shaded) underneath it. {@code
 * dev.fencekeeper.client.wire} is internal and exempt.
 */
class PublicApiTest {
  private static final List<String> FORBIDDEN =
      List.of(
          "dev.fencekeeper.proto.", "com.google.protobuf.", "org.apache.ratis.", "com.codahale.");

  // The two members that still name Dropwizard's MetricRegistry: deprecated for removal, kept for
  // this release so code that uses them keeps compiling (CHANGELOG, Deprecated). Nothing else may.
  private static final Set<String> DEPRECATED_DROPWIZARD =
      Set.of(
          "dev.fencekeeper.client.ClientMetrics.registry()",
          "dev.fencekeeper.client.FencingClient$Builder.metricRegistry("
              + "com.codahale.metrics.MetricRegistry)");

  // Guarantee: no public signature of the client API mentions a wire, protobuf, Ratis or Dropwizard
  // type, but for the two deprecated Dropwizard members.
  @Test
  void publicSignaturesMentionNoWireRatisOrMetricsLibraryType() {
    JavaClasses classes =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.fencekeeper.client");
    List<String> violations = new ArrayList<>();
    int checked = 0;
    for (JavaClass type : classes) {
      if (!type.getPackageName().equals("dev.fencekeeper.client") || !isPublicApi(type)) {
        continue;
      }
      checked++;
      for (JavaClass superType :
          involved(type.getRawSuperclass().map(JavaType.class::cast).orElse(null))) {
        check(violations, type.getName() + " extends", superType);
      }
      for (JavaMember member : type.getMembers()) {
        if (!isVisible(member.getModifiers())) {
          continue;
        }
        if (member instanceof JavaCodeUnit unit
            && DEPRECATED_DROPWIZARD.contains(unit.getFullName())) {
          assertThat(unit.isAnnotatedWith(Deprecated.class)).as(unit.getFullName()).isTrue();
          continue;
        }
        if (member instanceof JavaCodeUnit unit) {
          for (JavaClass c : involved(unit.getReturnType())) {
            check(violations, unit.getFullName() + " returns", c);
          }
          for (JavaType p : unit.getParameterTypes()) {
            for (JavaClass c : involved(p)) {
              check(violations, unit.getFullName() + " takes", c);
            }
          }
          for (JavaClass thrown : unit.getThrowsClause().getTypes()) {
            check(violations, unit.getFullName() + " throws", thrown);
          }
        } else if (member instanceof JavaField field) {
          for (JavaClass c : involved(field.getType())) {
            check(violations, field.getFullName() + " is", c);
          }
        }
      }
    }
    assertThat(checked).as("public types found").isGreaterThan(10);
    assertThat(violations).isEmpty();
  }

  private static boolean isPublicApi(JavaClass type) {
    for (JavaClass t = type; t != null; t = t.getEnclosingClass().orElse(null)) {
      if (!t.getModifiers().contains(JavaModifier.PUBLIC)) {
        return false;
      }
    }
    return true;
  }

  private static boolean isVisible(Set<JavaModifier> modifiers) {
    return modifiers.contains(JavaModifier.PUBLIC) || modifiers.contains(JavaModifier.PROTECTED);
  }

  private static Set<JavaClass> involved(JavaType type) {
    return type == null ? Set.of() : type.getAllInvolvedRawTypes();
  }

  private static void check(List<String> violations, String where, JavaClass c) {
    for (String prefix : FORBIDDEN) {
      if (c.getName().startsWith(prefix)) {
        violations.add(where + " " + c.getName());
      }
    }
  }
}
