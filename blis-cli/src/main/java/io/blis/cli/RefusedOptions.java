package io.blis.cli;

import java.util.Collection;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * A command that shares option mixins with others but refuses some of their options (with a
 * message saying why, when one is given): they are kept, so that giving one gets that message
 * rather than "unknown option", but left out of the command's {@code --help}.
 */
interface RefusedOptions {

  /** The names of the options this command refuses. */
  Collection<String> refusedOptions();

  /** Hides the refused options of {@code command} from its help, when it refuses any. */
  static void hideFromHelp(CommandLine command) {
    if (!(command.getCommand() instanceof RefusedOptions r)) {
      return;
    }
    CommandSpec spec = command.getCommandSpec();
    for (String name : r.refusedOptions()) {
      OptionSpec o = spec.findOption(name);
      if (o != null && !o.hidden()) {
        spec.remove(o);
        spec.addOption(OptionSpec.builder(o).hidden(true).build());
      }
    }
  }
}
