use std::time::Instant;
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let to = std::path::Path::new(&args[1]);
    if args[0] == "import" {
        let t = Instant::now();
        let imp = mem::semantic::install::install(std::path::Path::new(&args[2]), to).unwrap();
        eprintln!("import {:?} id {} bytes {}", t.elapsed(), imp.model.id, imp.model.bytes);
        return;
    }
    let t = Instant::now();
    let m = mem::semantic::model::Model::load(to).unwrap();
    eprintln!("load {:?}", t.elapsed());
    let texts: Vec<String> = args[2..].to_vec();
    let t = Instant::now();
    for q in &texts {
        let v = m.query(q).unwrap();
        println!("Q {}", v.iter().map(|x| format!("{x:.6}")).collect::<Vec<_>>().join(" "));
    }
    eprintln!("queries {:?}", t.elapsed());
    let t = Instant::now();
    for v in m.passages(&texts, &mut |_| {}).unwrap() {
        println!("P {}", v.iter().map(|x| format!("{x:.6}")).collect::<Vec<_>>().join(" "));
    }
    eprintln!("passages {:?}", t.elapsed());
}
