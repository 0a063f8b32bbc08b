package io.blis.engine;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The simulator core (every class of blis-engine; the applications live in blis-cli, which may
 * depend on it, never the other way) has no mutual class dependencies and no package cycles, and an
 * {@link Instance} reaches its event loop only through {@link EventLoop}: so each part can be
 * understood, tested and moved on its own.
 */
class CoreDependenciesTest {

  private static final String ROOT = "io.blis.engine";

  private static JavaClasses core;

  @BeforeAll
  static void importCore() {
    core = new ClassFileImporter()
        .withImportOption(new ImportOption.DoNotIncludeTests())
        .importPackages(ROOT);
    assertThat(core.contain(Engine.class)).as("the core was imported").isTrue();
  }

  @Test
  void noTwoCoreClassesDependOnEachOther() {
    // top-level class -> the top-level core classes it uses (nested and anonymous classes folded in)
    Map<String, Set<String>> uses = new TreeMap<>();
    // "A -> B" -> one dependency that makes it, to show where it comes from
    Map<String, String> evidence = new TreeMap<>();
    Set<String> coreClasses = core.stream().map(CoreDependenciesTest::topLevel)
        .collect(Collectors.toCollection(TreeSet::new));
    for (JavaClass c : core) {
      String from = topLevel(c);
      for (Dependency d : c.getDirectDependenciesFromSelf()) {
        String to = topLevel(d.getTargetClass());
        if (!to.equals(from) && coreClasses.contains(to)) {
          uses.computeIfAbsent(from, k -> new TreeSet<>()).add(to);
          evidence.putIfAbsent(from + " -> " + to, d.getDescription());
        }
      }
      // javac inlines another class's constants, leaving only its name in the constant pool (as
      // jdeps sees it): ArchUnit does not see such a use, so it is read from the class file
      for (String name : classesNamedInConstantPool(c)) {
        String to = topLevelOf(name);
        if (!to.equals(from) && coreClasses.contains(to)) {
          uses.computeIfAbsent(from, k -> new TreeSet<>()).add(to);
          evidence.putIfAbsent(from + " -> " + to, "Constant pool of <" + c.getName()
              + "> names <" + name + "> (an inlined constant?)");
        }
      }
    }
    List<String> mutual = new ArrayList<>();
    uses.forEach((a, targets) -> {
      for (String b : targets) {
        if (a.compareTo(b) < 0 && uses.getOrDefault(b, Set.of()).contains(a)) {
          mutual.add(a + " <-> " + b + "\n      " + evidence.get(a + " -> " + b) + "\n      "
              + evidence.get(b + " -> " + a));
        }
      }
    });
    assertThat(mutual)
        .as("pairs of core classes that depend on each other (break one direction: move the shared"
            + " constant or helper to a class of its own, or pass a narrow interface)")
        .isEmpty();
  }

  @Test
  void corePackagesAreFreeOfCycles() {
    slices().assignedFrom(new SliceAssignment() {
      @Override
      public SliceIdentifier getIdentifierOf(JavaClass c) {
        String pkg = c.getPackageName();
        if (pkg.equals(ROOT)) {
          return SliceIdentifier.of(ROOT);
        }
        if (pkg.startsWith(ROOT + ".")) {
          // io.blis.engine.cluster.x belongs to io.blis.engine.cluster
          return SliceIdentifier.of(ROOT + "." + pkg.substring(ROOT.length() + 1).split("\\.")[0]);
        }
        return SliceIdentifier.ignore();
      }

      @Override
      public String getDescription() {
        return "the core's packages (" + ROOT + " and each package under it)";
      }
    }).should().beFreeOfCycles().check(core);
  }

  @Test
  void anInstanceSeesOnlyTheEventLoopInterface() {
    noClasses().that().haveNameMatching(Pattern.quote(ROOT + ".Instance") + "(\\$.*)?")
        .should().dependOnClassesThat().haveNameMatching(Pattern.quote(ROOT + ".Engine") + "(\\$.*)?")
        .because("an instance is driven through the narrow EventLoop interface")
        .check(core);
  }

  /** The top-level class {@code c} is or is nested in (the component class of an array). */
  private static String topLevel(JavaClass c) {
    JavaClass t = c.isArray() ? c.getBaseComponentType() : c;
    while (t.getEnclosingClass().isPresent()) {
      t = t.getEnclosingClass().get();
    }
    return topLevelOf(t.getName());
  }

  private static String topLevelOf(String className) {
    int nested = className.indexOf('$');
    return nested < 0 ? className : className.substring(0, nested);
  }

  /** The classes (binary names, array types as their element type) {@code c}'s constant pool names. */
  private static Set<String> classesNamedInConstantPool(JavaClass c) {
    var source = c.getSource().orElseThrow(() -> new AssertionError("no class file for " + c.getName()));
    try (InputStream raw = source.getUri().toURL().openStream();
        DataInputStream in = new DataInputStream(new java.io.BufferedInputStream(raw))) {
      in.readInt(); // magic
      in.readUnsignedShort(); // minor version
      in.readUnsignedShort(); // major version
      int count = in.readUnsignedShort();
      String[] utf8 = new String[count];
      List<Integer> classNameIndexes = new ArrayList<>();
      for (int i = 1; i < count; i++) {
        int tag = in.readUnsignedByte();
        switch (tag) {
          case 1 -> utf8[i] = in.readUTF();
          case 7 -> classNameIndexes.add(in.readUnsignedShort());
          case 8, 16, 19, 20 -> in.skipNBytes(2);
          case 15 -> in.skipNBytes(3);
          case 3, 4, 9, 10, 11, 12, 17, 18 -> in.skipNBytes(4);
          case 5, 6 -> {
            in.skipNBytes(8);
            i++; // takes two entries
          }
          default -> throw new AssertionError("constant pool tag " + tag + " in " + source.getUri());
        }
      }
      Set<String> names = new TreeSet<>();
      for (int index : classNameIndexes) {
        String n = utf8[index].replaceFirst("^\\[+", "");
        if (n.startsWith("L") && n.endsWith(";")) {
          n = n.substring(1, n.length() - 1);
        }
        names.add(n.replace('/', '.'));
      }
      return names;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
